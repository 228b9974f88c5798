// The prior `ktune tune` gives its strategy (transfer, prior_configs.hpp): what the results
// database already knows about the same kernel on other problems or devices, then about other
// kernels of the same backend.
//
// The rule: the best ok config of every other (device, problem) of the same kernel family and
// backend in the database (Store::best_measurements), those measured on this device first (a
// new shape on known hardware), then those of other devices; within each, the closest problem
// first (problem_distance over the dims, prior_configs.hpp), then the most recently measured.
// Then, in the same order, the best config of every (device, problem) of the other families of
// this backend: the strategy takes only those valid in this space (the same parameter names and
// values: ktune's row kernels share theirs), so a new family starts from its siblings' fast
// configs. Measurements of this very device and problem are not prior: the
// tune reuses them directly.
//
//   const std::vector<Config> prior = tune_prior(store, "rmsnorm", "cpu", device, problem);
#pragma once

#include <string>
#include <vector>

#include "db/store.hpp"
#include "tuner/core/config.hpp"
#include "tuner/core/device.hpp"
#include "tuner/core/problem.hpp"

namespace ktune {

// A problem's dims as the sizes problem_distance compares (in the family's declared order).
std::vector<double> problem_sizes(const Problem& problem);

std::vector<Config> tune_prior(Store& store, const std::string& family, const std::string& backend,
                               const DeviceInfo& device, const Problem& problem);

}  // namespace ktune
