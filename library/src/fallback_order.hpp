// The untuned configs a call falls back to, in the order it tries them: the space's starting
// points, then its default (then, past these, its enumerated valid configs). Shared by the choice
// at run time (config_choice.cpp) and the ahead-of-time compiler (library/aot/), so the variant
// compiled for a shape is the one a call there picks.
//
// Starting points come first because they are the configs known to be fast where their
// constraints hold (a wgmma GEMM on sm_90a, mma.sync on sm_80); the default is the portable one
// that holds everywhere (a SIMT GEMM), 10-30x slower on a tensor-core GPU. A starting point
// whose constraints fail on this device or shape is skipped, so the default still serves there.
#pragma once

#include <vector>

#include "tuner/core/search_space.hpp"

namespace ktune::library {

inline std::vector<Config> untuned_configs(const SearchSpace& space) {
  std::vector<Config> configs(space.starting_points().begin(), space.starting_points().end());
  if (space.default_config()) configs.push_back(*space.default_config());
  return configs;
}

}  // namespace ktune::library
