// Which config a call runs: the tuned table's answer when it can run the problem on this device,
// else the space's default, else its starting points, else the first valid config of the space.
// On a GPU each of those runs a binary the library carries for these dims; failing all, one that
// takes the dims at run time; failing that, one compiled now (run_time_images.hpp). A config the
// caller gives is compiled now when the library does not carry it.
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

// The caller's config (a JSON object of the space's parameters, as `ktune export` writes them):
// Error(bad_argument) naming a parameter that is missing, unknown or not one of its values;
// Error(unsupported) when its constraints fail for this problem or the backend refuses it.
ChosenConfig given_config(Executor& executor, const KernelFamily& family, const Problem& problem,
                          std::string_view config_json);

}  // namespace ktune::library
