// What a search space's expressions see for one problem on one device, and the launch geometry
// they derive from it.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "tuner/core/config.hpp"
#include "tuner/core/device.hpp"
#include "tuner/core/problem.hpp"
#include "tuner/core/search_space.hpp"

namespace ktune {

// What a space's constraints and launch expressions read besides the parameters: the problem's
// dims, element_bytes of its precision, and the device's limits.
SpaceContext make_context(const Problem& problem, const DeviceInfo& device);

// The launch geometry (grid_x, block_x, shared_bytes, ...) the space derives for `config`.
std::map<std::string, std::int64_t> launch_geometry(const SearchSpace& space, const Config& config,
                                                    const SpaceContext& context);

}  // namespace ktune
