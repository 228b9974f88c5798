#include "library/src/tuned_tables.hpp"

namespace ktune::library {

std::optional<TunedAnswer> tuned_lookup(std::string_view backend, const DeviceInfo& device, const Problem& problem) {
  for (const TunedTable& table : tuned_tables())
    if (table.backend == backend && table.family == problem.family) return table.lookup(device, problem);
  return std::nullopt;
}

}  // namespace ktune::library
