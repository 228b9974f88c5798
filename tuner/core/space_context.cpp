#include "tuner/core/space_context.hpp"

#include "tuner/core/value.hpp"

namespace ktune {

SpaceContext make_context(const Problem& problem, const DeviceInfo& device) {
  SpaceContext context;
  for (const auto& [name, value] : problem.dims) context[name] = Value{value};
  context["element_bytes"] = Value{std::int64_t{element_bytes(problem.precision)}};
  context["precision"] = Value{std::string(to_string(problem.precision))};
  for (const auto& [name, value] : device.limits) context[name] = Value{value};
  return context;
}

std::map<std::string, std::int64_t> launch_geometry(const SearchSpace& space, const Config& config,
                                                    const SpaceContext& context) {
  std::map<std::string, std::int64_t> geometry;
  for (const auto& [name, value] : space.launch(config, context))
    geometry[name] = as_int(value, space.source() + ": launch." + name);
  return geometry;
}

}  // namespace ktune
