// Compares a kernel's outputs, as the device stored them, with the float64 reference: the
// largest relative L2 error of any output tensor. Each output counts on its own, so a small
// output (attention's O next to its log-sum-exp) cannot hide behind a large one. Every backend
// verifies through this.
//
// Outputs of large problems hold 10^8 elements; converting them to double and summing on one
// core took most of a GPU tune's time per config, so the work is split over the host's cores
// and no float64 copy of the whole output is made.
#pragma once

#include <span>
#include <vector>

#include "kernels/family.hpp"
#include "tuner/core/precision.hpp"
#include "tuner/measure/verify.hpp"

namespace ktune {

struct StoredOutput {
  const void* data;  // elements stored in `precision`
  Precision precision;
  // The reference, one value per element; NaN marks an element the reference did not compute
  // (a large GEMM checks sampled rows) and is skipped.
  std::span<const double> expected;
};

// The largest relative_l2_error (tuner/measure/verify.hpp) of the outputs: NaN when any stored
// value is NaN or infinite.
double stored_outputs_error(const std::vector<StoredOutput>& outputs);
// The largest |got - expected| / (atol + rtol * |expected|) over every checked element (numpy's
// allclose passes at 1 or below): NaN when a stored value is NaN or infinite where the reference
// is not the same value.
double stored_outputs_closeness(const std::vector<StoredOutput>& outputs, double atol, double rtol);

// The outputs judged as the family asks: its closeness() when it has one, else the relative L2
// error against its tolerance. Every GPU backend verifies through this.
struct OutputCheck {
  double error;
  Verdict verdict;
};
// The verdict on a closeness figure (stored_outputs_closeness, or the same computed on the
// device): passes at 1 or below.
OutputCheck judge_closeness(double error, const KernelFamily::Closeness& close);
OutputCheck check_outputs(const KernelFamily& family, const Problem& problem, const std::vector<StoredOutput>& outputs);

}  // namespace ktune
