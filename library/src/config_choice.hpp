// Which config a call runs: the tuned table's answer when it can run the problem on this device,
// else the space's default, else its starting points, else the first valid config of the space.
// "Can run" means every constraint of the space holds for this shape and device and the backend
// prepares it; so a stale or foreign table entry never makes a call fail.
#pragma once

#include "kernels/family.hpp"
#include "ktune/kernels.hpp"
#include "library/src/executor.hpp"

namespace ktune::library {

struct ChosenConfig {
  kernels::ConfigChoice choice;
  PreparedLaunch launch;
};

// Error(unsupported), naming the shape and what it violates, when no config of the space can
// run the problem here.
ChosenConfig choose_config(Executor& executor, const KernelFamily& family, const Problem& problem);

}  // namespace ktune::library
