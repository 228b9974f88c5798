#include "tuner/tune/export_tuned.hpp"

#include <algorithm>

#include "db/export/header_exporter.hpp"
#include "kernels/family.hpp"
#include "tuner/core/errors.hpp"
#include "tuner/core/search_space.hpp"
#include "tuner/core/space_context.hpp"
#include "tuner/tune/space_files.hpp"

namespace ktune {

std::filesystem::path export_dir_for(const std::filesystem::path& out_dir, const std::string& backend) {
  return out_dir / backend;
}

std::vector<std::string> option_dim_names(const KernelFamily& family) {
  std::vector<std::string> names;
  for (const auto& dim : family.dims())
    if (dim.min_value == 0 || dim.exact) names.push_back(dim.name);
  return names;
}

ExportedFamily export_tuned_family(Store& store, const std::string& family_name, const std::string& backend,
                                   const std::filesystem::path& out_dir, const SearchSpace* given_space) {
  const KernelFamily& family = find_family(family_name);
  const SearchSpace space = given_space ? *given_space : SearchSpace::load(default_space_file(family.name(), backend));
  ExportFamily input;
  input.family = family.name();
  input.backend = backend;
  for (const auto& dim : family.dims()) input.dim_names.push_back(dim.name);
  input.option_dims = option_dim_names(family);
  input.param_names = space.parameter_names();
  for (const Parameter& parameter : space.parameters())
    if (std::all_of(parameter.values.begin(), parameter.values.end(),
                    [](const Value& v) { return std::holds_alternative<std::int64_t>(v); }))
      input.integer_parameters.insert(parameter.name);
  if (!space.default_config())
    throw InputError(space.source() + ": has no \"default\" config, which the generated header needs as its fallback");
  input.default_config = *space.default_config();
  input.database = store.path().string();
  for (auto& entry : store.best_measurements(family.name()))
    if (entry.backend == backend) input.entries.push_back(std::move(entry));
  input.architecture_defaults = family.architecture_defaults();
  for (const auto& entry : input.entries) {
    // The launch geometry of the entry as it was measured: its shape on its device's limits.
    try {
      const auto launch = space.launch(entry.config, make_context(entry.problem, entry.device));
      const auto value = [&](const char* name) {
        const auto found = launch.find(name);
        const auto* number = found == launch.end() ? nullptr : std::get_if<std::int64_t>(&found->second);
        return number ? *number : std::int64_t{0};
      };
      const std::int64_t threads = value("block_x") * std::max<std::int64_t>(1, value("block_y")) *
                                   std::max<std::int64_t>(1, value("block_z"));
      if (value("shared_bytes") > 0 || threads > 0) input.resources[entry.measurement_id] = {value("shared_bytes"), threads};
    } catch (const std::exception&) {
      // A config of an older space that today's expressions cannot evaluate: no resources known.
    }
  }
  ExportedFamily exported;
  exported.entries = input.entries.size();
  exported.header = write_exports(input, export_dir_for(out_dir, backend));
  return exported;
}

}  // namespace ktune
