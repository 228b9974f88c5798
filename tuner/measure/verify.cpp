#include "tuner/measure/verify.hpp"

#include <cmath>
#include <cstdio>

namespace ktune {

double relative_l2_error(std::span<const double> got, std::span<const double> expected) {
  if (got.size() != expected.size()) return NAN;
  double diff_sq = 0;
  double ref_sq = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (!std::isfinite(got[i])) return NAN;
    const double d = got[i] - expected[i];
    diff_sq += d * d;
    ref_sq += expected[i] * expected[i];
  }
  return ref_sq > 0 ? std::sqrt(diff_sq / ref_sq) : std::sqrt(diff_sq);
}

Verdict judge_error(double error, double tolerance) {
  char text[128];
  if (std::isnan(error)) return {false, "output contains NaN or infinity"};
  if (error > tolerance) {
    std::snprintf(text, sizeof text, "relative L2 error %.2e > tolerance %.1e", error, tolerance);
    return {false, text};
  }
  std::snprintf(text, sizeof text, "relative L2 error %.2e <= tolerance %.1e", error, tolerance);
  return {true, text};
}

}  // namespace ktune
