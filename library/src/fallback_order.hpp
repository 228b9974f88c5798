// The untuned configs a call falls back to, in the order it tries them (then, past these, the
// space's enumerated valid configs). Shared by the choice at run time (config_choice.cpp) and the
// ahead-of-time compiler (library/aot/), so the variant compiled for a shape is the one a call
// there picks.
//
// A compute-bound family tries its space's starting points first: they are the configs known to
// be fast where their constraints hold (a wgmma GEMM on sm_90a, mma.sync on sm_80), while its
// default is the portable one that holds everywhere (a SIMT GEMM: 30x slower than PyTorch's GEMMs
// on an H200). A starting point whose constraints fail on the device or shape is skipped, so the
// default still serves there. A memory-bound family's default already streams at the memory's
// speed on every GPU (1.2-2.5x PyTorch on the H200), so it stays first.
#pragma once

#include <vector>

#include "kernels/family.hpp"
#include "tuner/core/search_space.hpp"

namespace ktune::library {

inline std::vector<Config> untuned_configs(const SearchSpace& space, const KernelFamily& family) {
  std::vector<Config> configs;
  if (space.default_config()) configs.push_back(*space.default_config());
  const std::vector<Config>& points = space.starting_points();
  configs.insert(family.memory_bound() ? configs.end() : configs.begin(), points.begin(), points.end());
  return configs;
}

}  // namespace ktune::library
