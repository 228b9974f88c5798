// Shared device code of ktune's CUDA kernels (compiled at tune time by NVRTC).
// Element type KT_T is float, __half or __nv_bfloat16; arithmetic is in float.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace kt {

__device__ __forceinline__ float to_float(float x) { return x; }
__device__ __forceinline__ float to_float(__half x) { return __half2float(x); }
__device__ __forceinline__ float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }

template <typename T>
__device__ __forceinline__ T from_float(float x);
template <>
__device__ __forceinline__ float from_float<float>(float x) { return x; }
template <>
__device__ __forceinline__ __half from_float<__half>(float x) { return __float2half_rn(x); }
template <>
__device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }

// An unsigned integer type of exactly N bytes, for N-byte vector loads and stores.
template <int N> struct Bits;
template <> struct Bits<2> { using type = unsigned short; };
template <> struct Bits<4> { using type = unsigned int; };
template <> struct Bits<8> { using type = uint2; };
template <> struct Bits<16> { using type = uint4; };

// VEC elements of T moved as one access of VEC * sizeof(T) bytes.
template <typename T, int VEC>
struct alignas(VEC * sizeof(T)) Vector {
  T v[VEC];
};

template <typename T, int VEC>
__device__ __forceinline__ void load_floats(const T* p, float (&out)[VEC]) {
  Vector<T, VEC> packed = *reinterpret_cast<const Vector<T, VEC>*>(p);
#pragma unroll
  for (int i = 0; i < VEC; ++i) out[i] = to_float(packed.v[i]);
}

template <typename T, int VEC>
__device__ __forceinline__ void store_floats(T* p, const float (&in)[VEC]) {
  Vector<T, VEC> packed;
#pragma unroll
  for (int i = 0; i < VEC; ++i) packed.v[i] = from_float<T>(in[i]);
  *reinterpret_cast<Vector<T, VEC>*>(p) = packed;
}

// Sum over the GROUP consecutive lanes of a warp that share a row (GROUP a power of two <= 32).
template <int GROUP>
__device__ __forceinline__ float group_sum(float x) {
#pragma unroll
  for (int offset = GROUP / 2; offset > 0; offset /= 2) x += __shfl_xor_sync(0xffffffffu, x, offset);
  return x;
}

template <int GROUP>
__device__ __forceinline__ float group_max(float x) {
#pragma unroll
  for (int offset = GROUP / 2; offset > 0; offset /= 2) x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, offset));
  return x;
}

// Sum over the THREADS threads that share a row (a power of two, multiple of 32 when above 32),
// rows laid out consecutively in the block. `scratch` holds ROWS * (THREADS / 32) floats.
template <int THREADS, int ROWS>
__device__ __forceinline__ float row_sum(float x, float* scratch) {
  x = group_sum<(THREADS < 32 ? THREADS : 32)>(x);
  if constexpr (THREADS > 32) {
    constexpr int WARPS = THREADS / 32;
    const int row = threadIdx.x / THREADS;
    const int warp = (threadIdx.x % THREADS) / 32;
    __syncwarp();
    if (threadIdx.x % 32 == 0) scratch[row * WARPS + warp] = x;
    __syncthreads();
    float total = 0.f;
#pragma unroll
    for (int w = 0; w < WARPS; ++w) total += scratch[row * WARPS + w];
    __syncthreads();  // scratch is reused by the next reduction
    return total;
  } else {
    return x;
  }
}

// Maximum over the THREADS threads that share a row; layout and scratch as for row_sum.
template <int THREADS, int ROWS>
__device__ __forceinline__ float row_max(float x, float* scratch) {
  x = group_max<(THREADS < 32 ? THREADS : 32)>(x);
  if constexpr (THREADS > 32) {
    constexpr int WARPS = THREADS / 32;
    const int row = threadIdx.x / THREADS;
    const int warp = (threadIdx.x % THREADS) / 32;
    __syncwarp();
    if (threadIdx.x % 32 == 0) scratch[row * WARPS + warp] = x;
    __syncthreads();
    float total = scratch[row * WARPS];
#pragma unroll
    for (int w = 1; w < WARPS; ++w) total = fmaxf(total, scratch[row * WARPS + w]);
    __syncthreads();  // scratch is reused by the next reduction
    return total;
  } else {
    return x;
  }
}

}  // namespace kt
