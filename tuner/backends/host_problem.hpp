// A problem as a GPU backend uploads it: its tensors' specs, the inputs as the device stores them
// (rounded to the problem's precision), and the float64 reference computed from those rounded
// inputs, so the reference sees exactly what the kernel sees.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/family.hpp"

namespace ktune {

struct HostProblem {
  std::string key;  // family, problem and seed: a backend keeps one problem loaded
  std::vector<TensorSpec> specs;
  std::vector<std::size_t> bytes;         // each tensor's size on the device
  std::vector<std::vector<char>> stored;  // each input (and read-write tensor) in its storage; empty for outputs
  HostTensors expected;                   // the reference's outputs (inputs as rounded)
};

std::string host_problem_key(const KernelFamily& family, const Problem& problem, std::uint64_t seed);
// With with_reference false, `expected` holds the inputs as rounded and zeroed outputs: the
// caller runs family.reference on it later (a backend computes it while the GPU measures).
HostProblem make_host_problem(const KernelFamily& family, const Problem& problem, std::uint64_t seed,
                              bool with_reference = true);

}  // namespace ktune
