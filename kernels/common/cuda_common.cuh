// Shared device code of ktune's GPU kernels (compiled at tune time by NVRTC, or by hiprtc for
// AMD GPUs through kernels/common/gpu_portable.cuh).
// Element type KT_T is float (fp32, tf32), kt::half, kt::bfloat16 or kt::fp8_e4m3; arithmetic is
// in float. The 16- and 8-bit types are plain storage with conversions written in PTX here, not
// the toolkit's cuda_fp16.h / cuda_bf16.h / cuda_fp8.h: parsing those took most of each
// variant's compile time (about 0.1 s of NVRTC's 0.15 s), and kernels need only conversions.
#pragma once

#include "kernels/common/gpu_portable.cuh"

namespace kt {

struct alignas(2) half {
  unsigned short bits;
};
struct alignas(2) bfloat16 {
  unsigned short bits;
};
struct fp8_e4m3 {
  unsigned char bits;
};

__device__ __forceinline__ float to_float(float x) { return x; }
__device__ __forceinline__ float to_float(half x) { return half_bits_to_float(x.bits); }
__device__ __forceinline__ float to_float(bfloat16 x) { return __uint_as_float(static_cast<unsigned>(x.bits) << 16); }
#if !KT_HIP  // the AMD targets hiprtc 5.2 reaches have no fp8: HIP variants take fp32, fp16, bf16
__device__ __forceinline__ float to_float(fp8_e4m3 x) {
  unsigned pair;  // f16x2 from e4m3x2; the low half holds x
  asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(pair) : "h"(static_cast<unsigned short>(x.bits)));
  return to_float(half{static_cast<unsigned short>(pair & 0xffffu)});
}
#endif

template <typename T>
__device__ __forceinline__ T from_float(float x);
template <>
__device__ __forceinline__ float from_float<float>(float x) { return x; }
// Each rounds to nearest even, as the host's conversions (kernels/common/cpu_numeric.hpp) do.
template <>
__device__ __forceinline__ half from_float<half>(float x) { return half{float_to_half_bits(x)}; }
template <>
__device__ __forceinline__ bfloat16 from_float<bfloat16>(float x) {
  bfloat16 out;
#if !KT_HIP && __CUDA_ARCH__ >= 800
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(out.bits) : "f"(x));
#else
  unsigned bits = __float_as_uint(x);
  if ((bits & 0x7f800000u) == 0x7f800000u && (bits & 0x007fffffu) != 0) bits = 0x7fc00000u;  // NaN stays NaN
  else bits += 0x7fffu + ((bits >> 16) & 1u);
  out.bits = static_cast<unsigned short>(bits >> 16);
#endif
  return out;
}
#if !KT_HIP
// Saturating to +-448 (satfinite) as the host does; needs sm_89 or later.
template <>
__device__ __forceinline__ fp8_e4m3 from_float<fp8_e4m3>(float x) {
  unsigned short pair;  // e4m3x2 of (0, x): x in the low byte
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(pair) : "f"(0.f), "f"(x));
  return fp8_e4m3{static_cast<unsigned char>(pair & 0xffu)};
}
#endif

template <typename T>
struct IsBf16 {
  static constexpr bool value = false;
};
template <>
struct IsBf16<bfloat16> {
  static constexpr bool value = true;
};

// An unsigned integer type of exactly N bytes, for N-byte vector loads and stores.
template <int N> struct Bits;
template <> struct Bits<1> { using type = unsigned char; };
template <> struct Bits<2> { using type = unsigned short; };
template <> struct Bits<4> { using type = unsigned int; };
template <> struct Bits<8> { using type = uint2; };
template <> struct Bits<16> { using type = uint4; };

// VEC elements of T moved as one access of VEC * sizeof(T) bytes.
template <typename T, int VEC>
struct alignas(VEC * sizeof(T)) Vector {
  T v[VEC];
};

// Cache hints of vector loads and stores. Streaming (evict-first, ld.global.cs / st.global.cs)
// suits data touched once, so it does not evict data that is read again (weights, tables).
constexpr int kCacheDefault = 0;
constexpr int kCacheStreaming = 1;

// VEC elements of T as one access of VEC * sizeof(T) bytes, through an unsigned integer type of
// that size so the hinted intrinsics apply.
template <typename T, int VEC>
union Packed {
  typename Bits<VEC * int(sizeof(T))>::type raw;
  Vector<T, VEC> elements;
};

template <typename T, int VEC, int HINT = kCacheDefault>
__device__ __forceinline__ void load_floats(const T* p, float (&out)[VEC]) {
  using Raw = typename Bits<VEC * int(sizeof(T))>::type;
  Packed<T, VEC> packed;
  if constexpr (HINT == kCacheStreaming) {
    packed.raw = load_streaming(reinterpret_cast<const Raw*>(p));
  } else {
    packed.raw = *reinterpret_cast<const Raw*>(p);
  }
  if constexpr (IsBf16<T>::value && VEC % 2 == 0) {
    // A bf16 is the high half of its float: one shift or one AND per element, where the
    // element-wise conversion spends a byte permute and a multiply on every odd one.
    const unsigned int* words = reinterpret_cast<const unsigned int*>(&packed);
#pragma unroll
    for (int w = 0; w < VEC / 2; ++w) {
      out[2 * w] = __uint_as_float(words[w] << 16);
      out[2 * w + 1] = __uint_as_float(words[w] & 0xffff0000u);
    }
  } else {
#pragma unroll
    for (int i = 0; i < VEC; ++i) out[i] = to_float(packed.elements.v[i]);
  }
}

template <typename T, int VEC, int HINT = kCacheDefault>
__device__ __forceinline__ void store_floats(T* p, const float (&in)[VEC]) {
  using Raw = typename Bits<VEC * int(sizeof(T))>::type;
  Packed<T, VEC> packed;
#pragma unroll
  for (int i = 0; i < VEC; ++i) packed.elements.v[i] = from_float<T>(in[i]);
  if constexpr (HINT == kCacheStreaming) {
    store_streaming(reinterpret_cast<Raw*>(p), packed.raw);
  } else {
    *reinterpret_cast<Raw*>(p) = packed.raw;
  }
}

// Orders this thread's earlier generic-proxy accesses of global memory before later async-proxy
// ones (Hopper's TMA) of any thread it synchronises with: a matrix one block writes with plain
// stores and another loads by TMA. Nothing to do where there is no TMA (before sm_90, AMD).
__device__ __forceinline__ void fence_async_proxy_global() {
#if !KT_HIP && __CUDA_ARCH__ >= 900
  asm volatile("fence.proxy.async.global;" ::: "memory");
#endif
}

// Sum over the GROUP consecutive lanes of a warp that share a row (GROUP a power of two <= 32).
template <int GROUP>
__device__ __forceinline__ float group_sum(float x) {
#pragma unroll
  for (int offset = GROUP / 2; offset > 0; offset /= 2) x += shfl_xor(x, offset);
  return x;
}

}  // namespace kt
