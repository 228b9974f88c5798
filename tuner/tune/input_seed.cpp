#include "tuner/tune/input_seed.hpp"

namespace ktune {

// FNV-1a: a stable per-problem input seed, identical on every platform.
std::uint64_t mix_seed(std::uint64_t seed, const std::string& text) {
  std::uint64_t hash = 1469598103934665603ull ^ seed;
  for (unsigned char ch : text) hash = (hash ^ ch) * 1099511628211ull;
  return hash;
}

}  // namespace ktune
