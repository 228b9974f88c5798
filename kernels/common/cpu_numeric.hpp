// Storage types of the CPU kernels and their conversions to and from float. Kernels load each
// element to float, compute in float (accumulating in float lanes), and store in the problem's
// precision, as the GPU kernels do.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "tuner/core/precision.hpp"

namespace ktune::cpu {

// bfloat16: the top 16 bits of a float, rounded to nearest even.
struct bf16 {
  std::uint16_t bits;
};
using fp16 = _Float16;

inline float to_float(float x) { return x; }
inline float to_float(fp16 x) { return static_cast<float>(x); }
inline float to_float(bf16 x) {
  const std::uint32_t wide = static_cast<std::uint32_t>(x.bits) << 16;
  float out;
  std::memcpy(&out, &wide, sizeof out);
  return out;
}

template <typename T>
T from_float(float x);
template <>
inline float from_float<float>(float x) { return x; }
template <>
inline fp16 from_float<fp16>(float x) { return static_cast<fp16>(x); }
template <>
inline bf16 from_float<bf16>(float x) {
  std::uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  if ((bits & 0x7f800000u) == 0x7f800000u && (bits & 0x007fffffu) != 0) return bf16{0x7fc0};  // NaN stays NaN
  bits += 0x7fffu + ((bits >> 16) & 1u);  // round to nearest even
  return bf16{static_cast<std::uint16_t>(bits >> 16)};
}

// tf32: a float whose mantissa is rounded to 10 bits (nearest even). Stored as a float, so the
// tensor cores' tf32 inputs and the reference see the same values.
struct tf32 {
  float value;
};
inline float to_float(tf32 x) { return x.value; }
template <>
inline tf32 from_float<tf32>(float x) {
  std::uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  if ((bits & 0x7f800000u) != 0x7f800000u) {  // NaN and infinity stay as they are
    bits += 0xfffu + ((bits >> 13) & 1u);
    bits &= 0xffffe000u;
  }
  tf32 out;
  std::memcpy(&out.value, &bits, sizeof bits);
  return out;
}

// fp8 e4m3 (OCP "e4m3fn"): 1 sign, 4 exponent (bias 7), 3 mantissa bits; no infinity, NaN is
// S.1111.111, the largest finite value 448. Rounding to nearest even, saturating at +-448 as
// the GPU's satfinite conversion does.
struct fp8_e4m3 {
  std::uint8_t bits;
};
inline float to_float(fp8_e4m3 x) {
  const int sign = x.bits >> 7, exponent = (x.bits >> 3) & 0xf, mantissa = x.bits & 7;
  float magnitude;
  if (exponent == 0xf && mantissa == 7) magnitude = __builtin_nanf("");
  else if (exponent == 0) magnitude = static_cast<float>(mantissa) * 0x1p-9f;  // subnormal: m/8 * 2^-6
  else magnitude = (1.0f + static_cast<float>(mantissa) / 8.0f) * __builtin_ldexpf(1.0f, exponent - 7);
  return sign ? -magnitude : magnitude;
}
template <>
inline fp8_e4m3 from_float<fp8_e4m3>(float x) {
  const std::uint8_t sign = __builtin_signbit(x) ? 0x80 : 0;
  if (__builtin_isnan(x)) return fp8_e4m3{0x7f};
  const float magnitude = __builtin_fabsf(x);
  if (magnitude >= 448.0f) return fp8_e4m3{static_cast<std::uint8_t>(sign | 0x7e)};
  int exponent;  // magnitude = fraction * 2^exponent, fraction in [0.5, 1)
  __builtin_frexpf(magnitude, &exponent);
  // Steps of 2^(e - 3) within the binade [2^e, 2^(e+1)), e = exponent - 1; subnormals (below
  // 2^-6) share the step of the lowest binade, 2^-9. nearbyint rounds ties to even.
  const int e = magnitude < 0x1p-6f ? -6 : exponent - 1;
  const int steps = static_cast<int>(__builtin_nearbyintf(__builtin_ldexpf(magnitude, 3 - e)));
  // steps is 0..8 for subnormals (8 is the smallest normal) and 8..16 for normals (16 carries
  // into the next binade); the code is (biased exponent << 3) + mantissa either way.
  const int code = magnitude < 0x1p-6f ? steps : ((e + 7) << 3) + (steps - 8);
  return fp8_e4m3{static_cast<std::uint8_t>(sign | (code > 0x7e ? 0x7e : code))};
}

// Calls fn.template operator()<T>() with T the storage type of `precision`; returns false for a
// precision without CPU storage.
template <typename Fn>
bool with_storage_type(Precision precision, Fn&& fn) {
  switch (precision) {
    case Precision::fp32: fn.template operator()<float>(); return true;
    case Precision::fp16: fn.template operator()<fp16>(); return true;
    case Precision::bf16: fn.template operator()<bf16>(); return true;
    default: return false;
  }
}

// As with_storage_type, also for the precisions only some families take (tf32, fp8 e4m3), so
// the kernels of the others are not compiled for them.
template <typename Fn>
bool with_any_storage_type(Precision precision, Fn&& fn) {
  switch (precision) {
    case Precision::tf32: fn.template operator()<tf32>(); return true;
    case Precision::fp8_e4m3: fn.template operator()<fp8_e4m3>(); return true;
    default: return with_storage_type(precision, fn);
  }
}

// Calls fn.template operator()<T>() with T the C++ type of fp64 or an integer storage type,
// whose values convert to and from double directly (no float in between); false otherwise.
template <typename Fn>
bool with_exact_storage_type(Precision precision, Fn&& fn) {
  switch (precision) {
    case Precision::fp64: fn.template operator()<double>(); return true;
    case Precision::int8: fn.template operator()<std::int8_t>(); return true;
    case Precision::uint8: fn.template operator()<std::uint8_t>(); return true;
    case Precision::int16: fn.template operator()<std::int16_t>(); return true;
    case Precision::uint16: fn.template operator()<std::uint16_t>(); return true;
    case Precision::int32: fn.template operator()<std::int32_t>(); return true;
    case Precision::uint32: fn.template operator()<std::uint32_t>(); return true;
    case Precision::int64: fn.template operator()<std::int64_t>(); return true;
    case Precision::uint64: fn.template operator()<std::uint64_t>(); return true;
    default: return false;
  }
}

// Any storage type at all: the float formats through float, the exact ones through double.
template <typename Fn>
bool with_every_storage_type(Precision precision, Fn&& fn) {
  return with_exact_storage_type(precision, fn) || with_any_storage_type(precision, fn);
}

// An element as double, whatever its storage.
template <typename T>
double to_double(T x) {
  if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, fp16>) return static_cast<double>(x);
  else return to_float(x);
}

// Host copies of tensors: float64 values to the precision's storage and back, element by element.
// Every backend converts its inputs and reads back its outputs through these.
inline void store_values(Precision precision, const std::vector<double>& values, void* out) {
  const bool exact = with_exact_storage_type(precision, [&]<typename T>() {
    T* typed = static_cast<T*>(out);
    for (std::size_t i = 0; i < values.size(); ++i) typed[i] = static_cast<T>(values[i]);
  });
  if (exact) return;
  with_any_storage_type(precision, [&]<typename T>() {
    T* typed = static_cast<T*>(out);
    for (std::size_t i = 0; i < values.size(); ++i) typed[i] = from_float<T>(static_cast<float>(values[i]));
  });
}

inline void load_values(Precision precision, const void* in, std::vector<double>& values) {
  with_every_storage_type(precision, [&]<typename T>() {
    const T* typed = static_cast<const T*>(in);
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = to_double(typed[i]);
  });
}

}  // namespace ktune::cpu
