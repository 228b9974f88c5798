#include "tuner/tune/tune_prior.hpp"

#include <algorithm>

#include "tuner/strategies/prior_configs.hpp"

namespace ktune {
namespace {

// The best configs of these measurements, those of this device first, then the closest
// problem, then the most recently measured.
std::vector<Config> closest_first(std::vector<BestMeasurement> others, const DeviceInfo& device,
                                  const Problem& problem) {
  // Each measurement's distance once, not once per comparison of the sort.
  const std::vector<double> sizes = problem_sizes(problem);
  struct Ranked {
    bool here;
    double distance;
    BestMeasurement* best;
  };
  std::vector<Ranked> ranked;
  for (BestMeasurement& best : others)
    ranked.push_back({best.device.fingerprint == device.fingerprint,
                      problem_distance(problem_sizes(best.problem), sizes), &best});
  std::stable_sort(ranked.begin(), ranked.end(), [](const Ranked& a, const Ranked& b) {
    if (a.here != b.here) return a.here;
    if (a.distance != b.distance) return a.distance < b.distance;
    return a.best->measured_at > b.best->measured_at;
  });
  std::vector<Config> configs;
  for (const Ranked& r : ranked) configs.push_back(std::move(r.best->config));
  return configs;
}

}  // namespace

std::vector<double> problem_sizes(const Problem& problem) {
  std::vector<double> sizes;
  for (const auto& [name, value] : problem.dims) sizes.push_back(static_cast<double>(value));
  return sizes;
}

std::vector<Config> tune_prior(Store& store, const std::string& family, const std::string& backend,
                               const DeviceInfo& device, const Problem& problem) {
  std::vector<BestMeasurement> same_family, other_families;
  for (BestMeasurement& best : store.best_measurements()) {
    if (best.backend != backend) continue;
    if (best.family != family) {
      other_families.push_back(std::move(best));
      continue;
    }
    if (best.device.fingerprint == device.fingerprint && best.problem.key() == problem.key()) continue;
    same_family.push_back(std::move(best));
  }
  std::vector<Config> prior;
  append_unseen(prior, closest_first(std::move(same_family), device, problem));
  append_unseen(prior, closest_first(std::move(other_families), device, problem));
  return prior;
}

}  // namespace ktune
