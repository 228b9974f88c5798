#include "tuner/bench/bench_config.hpp"

#include <cmath>
#include <fstream>
#include <limits>

#include "tuner/backends/registry.hpp"
#include "tuner/core/errors.hpp"
#include "tuner/core/json_file.hpp"
#include "tuner/tune/export_tuned.hpp"

namespace ktune {

BenchConfigChooser::BenchConfigChooser(Store& store, std::filesystem::path tuned_dir)
    : store_(store), tuned_dir_(std::move(tuned_dir)) {}

ChosenConfig BenchConfigChooser::choose(const KernelFamily& family, const std::string& backend,
                                        const DeviceInfo& device, const Problem& problem, const SearchSpace& space,
                                        const SpaceContext& context) {
  std::optional<ChosenConfig> chosen = tuned_dir_.empty() ? from_database(family, backend, device, problem, space, context)
                                                          : from_table(family, backend, device, problem);
  if (chosen) return *chosen;
  if (!space.default_config() || !space.violated(*space.default_config(), context).empty())
    throw InputError(space.source() + ": no tuned config for " + problem.describe() + " on " + device.name +
                     " and the space's default is not valid there; tune it first (ktune tune -k " + family.name() +
                     " --shape ...)");
  return {*space.default_config(), "default", 0, std::nullopt};
}

std::optional<ChosenConfig> BenchConfigChooser::from_table(const KernelFamily& family, const std::string& backend,
                                                           const DeviceInfo& device, const Problem& problem) {
  const auto file = export_dir_for(tuned_dir_, backend) / (family.name() + ".json");
  auto [cached, inserted] = tables_.try_emplace(file.string());
  if (inserted && std::filesystem::exists(file)) {
    std::ifstream in = open_json_file(file, "a generated config table", "run ktune export or ktune tune to write it");
    nlohmann::json json;
    try {
      json = nlohmann::json::parse(in);
    } catch (const nlohmann::json::parse_error& e) {
      throw InputError(file.string() + ": not valid JSON: " + parse_error_text(e));
    }
    cached->second.emplace(json, file.string(), family);
  }
  if (!cached->second) return std::nullopt;  // no table for this family: its default runs
  const auto answer = cached->second->lookup(device, problem);
  if (!answer) return std::nullopt;
  const ConfigTableEntry& entry = *answer->entry;
  // Says where the config came from whenever it is not this device's own entry for this problem.
  std::string source = "header";
  if (answer->level != tuned::MatchLevel::device)
    source += ", " + std::string(tuned::to_string(answer->level)) + " match (tuned on " + entry.device + ")";
  if (entry.tuned_at.key() != problem.key()) source += ", tuned at " + entry.tuned_at.describe();
  return ChosenConfig{entry.config, source, entry.measurement_id, entry.tuned_at};
}

std::optional<ChosenConfig> BenchConfigChooser::from_database(const KernelFamily& family, const std::string& backend,
                                                              const DeviceInfo& device, const Problem& problem,
                                                              const SearchSpace& space, const SpaceContext& context) {
  auto [cached, inserted] = best_by_family_.try_emplace(family.name());
  if (inserted) cached->second = store_.best_measurements(family.name());
  const std::string current_source = kernel_source_hash(family, backend);
  const std::string key = problem.key();
  const double bytes = family.byte_count(problem);

  const BestMeasurement* exact = nullptr;
  const BestMeasurement* nearest = nullptr;
  double nearest_distance = std::numeric_limits<double>::infinity();
  for (const BestMeasurement& best : cached->second) {
    if (best.backend != backend || best.device.fingerprint != device.fingerprint) continue;
    if (best.problem.key() == key) {
      // The current kernel source's result first; among equals the faster.
      const auto rank = [&](const BestMeasurement& m) {
        return std::make_pair(m.source_hash != current_source, m.stats.median_ns);
      };
      if (!exact || rank(best) < rank(*exact)) exact = &best;
      continue;
    }
    if (best.problem.precision != problem.precision || !space.violated(best.config, context).empty()) continue;
    const double distance = std::abs(std::log(family.byte_count(best.problem) / bytes));
    if (distance < nearest_distance) {
      nearest_distance = distance;
      nearest = &best;
    }
  }
  if (exact) return ChosenConfig{exact->config, "database", exact->measurement_id, exact->problem};
  if (nearest)
    return ChosenConfig{nearest->config, "database, tuned at " + nearest->problem.describe(), nearest->measurement_id,
                        nearest->problem};
  return std::nullopt;
}

}  // namespace ktune
