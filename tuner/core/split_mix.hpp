// A small seeded generator for strategies and the report. splitmix64 keeps every sequence identical
// across platforms and standard libraries for a given seed (std::uniform_int_distribution and
// friends are not), which is what makes a tune or a replay reproducible from its seed.
//
//   SplitMix rng(seed);
//   std::size_t pick = rng.below(size);   // uniform in [0, size)
//   if (rng.uniform() < probability) ...  // uniform in [0, 1)
#pragma once

#include <cstddef>
#include <cstdint>

namespace ktune {

class SplitMix {
 public:
  explicit SplitMix(std::uint64_t seed) : state_(seed) {}

  std::uint64_t next() {
    state_ += 0x9e3779b97f4a7c15ull;
    std::uint64_t z = state_;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, bound); bound must be positive. The modulo bias is below 2^-40 for the
  // space sizes strategies see, far under any effect a search could show.
  std::size_t below(std::size_t bound) { return static_cast<std::size_t>(next() % bound); }
  // Uniform in [0, 1), from the top 53 bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

 private:
  std::uint64_t state_;
};

}  // namespace ktune
