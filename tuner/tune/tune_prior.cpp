#include "tuner/tune/tune_prior.hpp"

#include <algorithm>

#include "tuner/strategies/prior_configs.hpp"

namespace ktune {
namespace {

// The best configs of these measurements, those of this device first, then the closest
// problem, then the most recently measured.
std::vector<Config> closest_first(std::vector<BestMeasurement> others, const DeviceInfo& device,
                                  const Problem& problem) {
  const std::vector<double> sizes = problem_sizes(problem);
  std::stable_sort(others.begin(), others.end(), [&](const BestMeasurement& a, const BestMeasurement& b) {
    const bool a_here = a.device.fingerprint == device.fingerprint;
    const bool b_here = b.device.fingerprint == device.fingerprint;
    if (a_here != b_here) return a_here;
    const double a_distance = problem_distance(problem_sizes(a.problem), sizes);
    const double b_distance = problem_distance(problem_sizes(b.problem), sizes);
    if (a_distance != b_distance) return a_distance < b_distance;
    return a.measured_at > b.measured_at;
  });
  std::vector<Config> configs;
  for (BestMeasurement& best : others) configs.push_back(std::move(best.config));
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
