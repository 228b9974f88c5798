// Storage types of the CPU kernels and their conversions to and from float. Kernels load each
// element to float, compute in float (accumulating in float lanes), and store in the problem's
// precision, as the GPU kernels do.
#pragma once

#include <cstdint>
#include <cstring>
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

// Host copies of tensors: float64 values to the precision's storage and back, element by element.
// Every backend converts its inputs and reads back its outputs through these.
inline void store_values(Precision precision, const std::vector<double>& values, void* out) {
  with_storage_type(precision, [&]<typename T>() {
    T* typed = static_cast<T*>(out);
    for (std::size_t i = 0; i < values.size(); ++i) typed[i] = from_float<T>(static_cast<float>(values[i]));
  });
}

inline void load_values(Precision precision, const void* in, std::vector<double>& values) {
  with_storage_type(precision, [&]<typename T>() {
    const T* typed = static_cast<const T*>(in);
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = to_float(typed[i]);
  });
}

}  // namespace ktune::cpu
