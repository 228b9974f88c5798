// Compares a kernel's outputs, as the device stored them, with the float64 reference: the
// relative L2 error over all output tensors. Every backend verifies through this.
//
// Outputs of large problems hold 10^8 elements; converting them to double and summing on one
// core took most of a GPU tune's time per config, so the work is split over the host's cores
// and no float64 copy of the whole output is made.
#pragma once

#include <span>
#include <vector>

#include "tuner/core/precision.hpp"

namespace ktune {

struct StoredOutput {
  const void* data;                   // elements in the problem's storage precision
  // The reference, one value per element; NaN marks an element the reference did not compute
  // (a large GEMM checks sampled rows) and is skipped.
  std::span<const double> expected;
};

// relative_l2_error (tuner/measure/verify.hpp) of all outputs taken as one vector: NaN when any
// stored value is NaN or infinite.
double stored_outputs_error(Precision precision, const std::vector<StoredOutput>& outputs);

}  // namespace ktune
