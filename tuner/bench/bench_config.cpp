#include "tuner/bench/bench_config.hpp"

#include <cmath>
#include <fstream>
#include <limits>

#include "tuner/backends/registry.hpp"
#include "tuner/core/errors.hpp"
#include "tuner/core/json_file.hpp"
#include "tuner/tune/export_tuned.hpp"

namespace ktune {
namespace {

nlohmann::json shape_json(const Problem& problem) {
  nlohmann::json shape = nlohmann::json::object();
  for (const auto& [name, value] : problem.dims) shape[name] = value;
  return shape;
}

}  // namespace

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
  return {*space.default_config(), "default", 0};
}

std::optional<ChosenConfig> BenchConfigChooser::from_table(const KernelFamily& family, const std::string& backend,
                                                           const DeviceInfo& device, const Problem& problem) {
  const auto file = export_dir_for(tuned_dir_, backend) / (family.name() + ".json");
  auto [cached, inserted] = tables_.try_emplace(file.string());
  if (inserted) {
    if (!std::filesystem::exists(file)) {
      cached->second = nullptr;  // no table for this family: its default runs
    } else {
      std::ifstream in = open_json_file(file, "a generated config table", "run ktune export or ktune tune to write it");
      try {
        cached->second = nlohmann::json::parse(in);
      } catch (const nlohmann::json::parse_error& e) {
        throw InputError(file.string() + ": not valid JSON: " + parse_error_text(e));
      }
    }
  }
  const nlohmann::json& table = cached->second;
  if (table.is_null()) return std::nullopt;
  if (!table.is_object() || !table.contains("entries") || !table["entries"].is_array())
    throw InputError(file.string() + ": not a generated config table (no \"entries\" array)");
  const nlohmann::json shape = shape_json(problem);
  const std::string precision(to_string(problem.precision));
  for (const auto& entry : table["entries"]) {
    if (!entry.is_object()) continue;
    if (entry.value("backend", "") != backend || entry.value("precision", "") != precision) continue;
    if (!entry.contains("device") || entry["device"].value("fingerprint", "") != device.fingerprint) continue;
    if (entry.value("shape", nlohmann::json()) != shape) continue;
    return ChosenConfig{Config::from_json(entry.at("config"), file.string() + " entry config"), "header",
                        entry.value("measurement_id", std::int64_t{0})};
  }
  return std::nullopt;
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
  if (exact) return ChosenConfig{exact->config, "database", exact->measurement_id};
  if (nearest)
    return ChosenConfig{nearest->config, "database, tuned at " + nearest->problem.describe(), nearest->measurement_id};
  return std::nullopt;
}

}  // namespace ktune
