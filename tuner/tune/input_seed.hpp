// The seed of a problem's random inputs.
#pragma once

#include <cstdint>
#include <string>

namespace ktune {

// A stable input seed per problem, identical on every platform (FNV-1a of the text over `seed`).
std::uint64_t mix_seed(std::uint64_t seed, const std::string& text);

}  // namespace ktune
