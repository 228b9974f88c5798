// Which config `ktune bench` runs for a problem, and where it came from:
//   1. with --tuned DIR, the generated table DIR[/<backend>]/<family>.json that sits next to each
//      generated header, looked up by the header's own rule (config_table.hpp): the entry of this
//      device and shape ("header"), else of the nearest tuned shape or of another device of the
//      same architecture or vendor ("header, tuned at rows=... cols=... fp32", "header,
//      architecture match (tuned on ...)"); where the header gives its default, the default;
//   2. otherwise the database: the best ok measurement for this device and problem ("database"),
//      else the best for the nearest tuned problem of the same precision on this device whose
//      config is valid here ("database, tuned at rows=... cols=..."): tuned configs carry over
//      between nearby shapes far better than the untuned default does;
//   3. the search space's default ("default").
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "db/store.hpp"
#include "kernels/family.hpp"
#include "tuner/bench/config_table.hpp"
#include "tuner/core/config.hpp"
#include "tuner/core/device.hpp"
#include "tuner/core/search_space.hpp"

namespace ktune {

struct ChosenConfig {
  Config config;
  std::string source;               // "header", "database", "database, tuned at ...", "default"
  std::int64_t measurement_id = 0;  // of the tune that found it, when from the database
  std::optional<Problem> tuned_at;  // the problem it was tuned at; nullopt for the default
};

class BenchConfigChooser {
 public:
  // `tuned_dir` empty: choose from the database.
  BenchConfigChooser(Store& store, std::filesystem::path tuned_dir);

  // InputError when nothing applies: no tuned config and the space has no valid default.
  ChosenConfig choose(const KernelFamily& family, const std::string& backend, const DeviceInfo& device,
                      const Problem& problem, const SearchSpace& space, const SpaceContext& context);

 private:
  std::optional<ChosenConfig> from_table(const KernelFamily& family, const std::string& backend,
                                         const DeviceInfo& device, const Problem& problem);
  std::optional<ChosenConfig> from_database(const KernelFamily& family, const std::string& backend,
                                            const DeviceInfo& device, const Problem& problem,
                                            const SearchSpace& space, const SpaceContext& context);

  Store& store_;
  std::filesystem::path tuned_dir_;
  std::map<std::string, std::vector<BestMeasurement>> best_by_family_;  // loaded once per family
  std::map<std::string, std::optional<ConfigTable>> tables_;             // by file path; nullopt: none
};

}  // namespace ktune
