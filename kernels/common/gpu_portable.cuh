// What differs between CUDA (NVRTC, NVIDIA GPUs) and HIP (hiprtc, AMD GPUs) in ktune's kernels,
// so that one kernel source serves both. Everything else (threads, blocks, shared memory,
// __syncthreads, the math library) has the same spelling on both.
//
// KT_HIP is 1 when hiprtc compiles the source for an AMD GPU, 0 under NVRTC. Code that only one
// vendor has (PTX: mma.sync, wgmma, TMA, clusters) stays in headers that the HIP search spaces
// never select; the portable paths use only what is here.
#pragma once

#if defined(__HIP__) || defined(__HIPCC_RTC__)
#define KT_HIP 1
#else
#define KT_HIP 0
#endif

namespace kt {

// Lanes that run in lockstep: a warp of 32 on NVIDIA, a wavefront of 64 (CDNA, gfx9) or 32
// (RDNA, gfx10+) on AMD. Kernels reduce over groups of at most 32 lanes, which lie inside one
// warp or wavefront either way.
#if KT_HIP
constexpr int kLockstepLanes = __AMDGCN_WAVEFRONT_SIZE;
#else
constexpr int kLockstepLanes = 32;
#endif

// x from the lane whose index differs from this one's in the bits of `mask` (mask < 32).
__device__ __forceinline__ float shfl_xor(float x, int mask) {
#if KT_HIP
  return __shfl_xor(x, mask);
#else
  return __shfl_xor_sync(0xffffffffu, x, mask);
#endif
}

// Whether `predicate` holds on any lane of this thread's warp or wavefront.
__device__ __forceinline__ bool lanes_any(bool predicate) {
#if KT_HIP
  return __any(predicate) != 0;
#else
  return __any_sync(0xffffffffu, predicate) != 0;
#endif
}

// Loads and stores with an evict-first hint (data touched once), for any type the hardware
// moves in one access (1 to 16 bytes). hiprtc 5.2 offers the non-temporal hint only for scalars,
// so AMD variants load and store plainly: the HIP search spaces leave the hint out.
template <typename Raw>
__device__ __forceinline__ Raw load_streaming(const Raw* p) {
#if KT_HIP
  return *p;
#else
  return __ldcs(p);
#endif
}
template <typename Raw>
__device__ __forceinline__ void store_streaming(Raw* p, Raw value) {
#if KT_HIP
  *p = value;
#else
  __stcs(p, value);
#endif
}

// IEEE half <-> float, rounding to nearest even.
__device__ __forceinline__ float half_bits_to_float(unsigned short bits) {
#if KT_HIP
  return static_cast<float>(__builtin_bit_cast(_Float16, bits));
#else
  float out;
  asm("cvt.f32.f16 %0, %1;" : "=f"(out) : "h"(bits));
  return out;
#endif
}
__device__ __forceinline__ unsigned short float_to_half_bits(float x) {
#if KT_HIP
  return __builtin_bit_cast(unsigned short, static_cast<_Float16>(x));
#else
  unsigned short out;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(out) : "f"(x));
  return out;
#endif
}

// 2^x, fast: the hardware's ex2 alone on NVIDIA (2 ulp; subnormal results are 0), which saves
// a compare, a select and two multiplies per call in kernels bound by instruction issue. AMD's
// exp2f is its hardware instruction already.
__device__ __forceinline__ float exp2_flush_subnormal(float x) {
#if KT_HIP
  return exp2f(x);
#else
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
#endif
}

// 1/x by the hardware's reciprocal alone (1 ulp; 1/inf = 0): a quarter of what IEEE division costs.
__device__ __forceinline__ float reciprocal_approx(float x) {
#if KT_HIP
  return __builtin_amdgcn_rcpf(x);
#else
  float y;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
#endif
}

}  // namespace kt

// Keeps the compiler from moving the computation of a 32-bit value past this point (an empty
// asm that claims to read and write it in a register).
#if KT_HIP
#define KT_PIN_REGISTER(x) asm volatile("" : "+v"(x))
#else
#define KT_PIN_REGISTER(x) asm volatile("" : "+r"(x))
#endif
