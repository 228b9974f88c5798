// The untuned configs a call falls back to, in the order it tries them: the space's default,
// then its starting points (then, past these, its enumerated valid configs). Shared by the
// choice at run time (config_choice.cpp) and the ahead-of-time compiler (library/aot/), so the
// variant compiled for a shape is the one a call there picks.
#pragma once

#include <vector>

#include "tuner/core/search_space.hpp"

namespace ktune::library {

inline std::vector<Config> untuned_configs(const SearchSpace& space) {
  std::vector<Config> configs;
  if (space.default_config()) configs.push_back(*space.default_config());
  configs.insert(configs.end(), space.starting_points().begin(), space.starting_points().end());
  return configs;
}

}  // namespace ktune::library
