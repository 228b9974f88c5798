// A small set of valid configs that together hold every pair of values of every two parameters
// that occurs among the valid configs (and so every single value): a compile check of this set
// exercises every structural option of a space and each interaction of two options, at a
// fraction of the cost of compiling every variant. Seeded: the same seed picks the same set.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "tuner/core/search_space.hpp"

namespace ktune {

// Indices into `valid`, in the order chosen. Parameters in `ignored` (launch-only ones, which
// never change the compiled code) are left out of the pairs.
std::vector<std::size_t> covering_sample(const ValidConfigs& valid, std::uint64_t seed,
                                         const std::vector<std::string>& ignored = {});

}  // namespace ktune
