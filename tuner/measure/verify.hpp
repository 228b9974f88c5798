// Output verification against the float64 reference.
#pragma once

#include <span>
#include <string>

namespace ktune {

// ||got - expected||_2 / ||expected||_2 (absolute norm when the reference is all zeros).
// Returns NaN when any value of `got` is NaN or infinite: a NaN never passes.
double relative_l2_error(std::span<const double> got, std::span<const double> expected);

struct Verdict {
  bool passed;
  std::string message;  // e.g. "relative L2 error 3.1e-02 > tolerance 1.0e-05"
};
Verdict judge_error(double error, double tolerance);

}  // namespace ktune
