// Writes tuned/<backend>/<family>.hpp: the winning configs as named compile-time structs with provenance
// and a lookup with the fallback chain device -> architecture -> vendor -> default, choosing the
// nearest tuned shape when the exact shape was not tuned. Also writes tuned/<family>.json.
#pragma once

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "db/store.hpp"
#include "tuner/core/architecture_default.hpp"
#include "tuner/core/config.hpp"

namespace ktune {

struct EntryResources {
  std::int64_t shared_bytes = 0;  // shared memory per block
  std::int64_t threads = 0;       // threads per block
};

struct ExportFamily {
  std::string family;
  std::string backend;  // "cpu", "cuda", "hip", "vulkan": the header's namespace is ktune::tuned::<backend>::<family>
  std::vector<std::string> dim_names;    // problem dims, in the family's order
  // Dims that pick an option (a layout, an epilogue) rather than a size: a tuned entry answers a
  // lookup only when these match exactly (its config may be invalid for another option).
  std::vector<std::string> option_dims;
  std::vector<std::string> param_names;  // config parameters, in the space's order
  Config default_config;                 // the family's untuned default (search space "default")
  // Parameters whose search-space values are all integers: an entry may not hold a fraction.
  std::set<std::string> integer_parameters;
  std::string database;                  // path of the database the entries came from
  std::vector<BestMeasurement> entries;  // from Store::best_measurements(family)
  // Launch resources of entries by measurement id (the search space's launch expressions at the
  // entry's shape and device); an entry not listed needs none (CPU).
  std::map<std::int64_t, EntryResources> resources;
  // Untuned starting points per kind of GPU (KernelFamily::architecture_defaults).
  std::vector<ArchitectureDefault> architecture_defaults;
};

// Returns the header text (deterministic for the same input apart from the generation date).
std::string render_header(const ExportFamily& input, const std::string& generated_at);
nlohmann::json render_json(const ExportFamily& input, const std::string& generated_at);

// Writes <out_dir>/<family>.hpp and <out_dir>/<family>.json; returns the header path.
std::filesystem::path write_exports(const ExportFamily& input, const std::filesystem::path& out_dir);

}  // namespace ktune
