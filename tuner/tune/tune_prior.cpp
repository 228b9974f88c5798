#include "tuner/tune/tune_prior.hpp"

#include <algorithm>

namespace ktune {

std::vector<Config> tune_prior(Store& store, const std::string& family, const std::string& backend,
                               const DeviceInfo& device, const Problem& problem) {
  std::vector<BestMeasurement> others;
  for (BestMeasurement& best : store.best_measurements(family)) {
    if (best.backend != backend) continue;
    if (best.device.fingerprint == device.fingerprint && best.problem.key() == problem.key()) continue;
    others.push_back(std::move(best));
  }
  std::stable_sort(others.begin(), others.end(), [&](const BestMeasurement& a, const BestMeasurement& b) {
    const bool a_here = a.device.fingerprint == device.fingerprint;
    const bool b_here = b.device.fingerprint == device.fingerprint;
    if (a_here != b_here) return a_here;
    return a.measured_at > b.measured_at;
  });
  std::vector<Config> prior;
  for (const BestMeasurement& best : others)
    if (std::find(prior.begin(), prior.end(), best.config) == prior.end()) prior.push_back(best.config);
  return prior;
}

}  // namespace ktune
