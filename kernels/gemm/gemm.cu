// GEMM on CUDA (kernels/gemm/gemm.hpp has the problem). The "path" parameter picks the kernel:
//   simt  - any GPU, any precision, layout and shape: shared-memory tiles, fp32 FMA
//           (kernels/gemm/gemm_simt.cuh);
//   mma   - sm_80 and later, fp16/bf16, either layout, 16-byte aligned rows: cp.async stages,
//           ldmatrix and mma.sync m16n8k16 (kernels/gemm/gemm_mma.cuh);
//   wgmma - Hopper (sm_90a), tf32/fp16/bf16/fp8 e4m3 with B as [n,k] and rows of k a multiple of
//           16 bytes: TMA loads into a
//           multi-stage shared-memory pipeline on mbarriers, one producer warp feeding consumer
//           warpgroups that run wgmma (kernels/gemm/gemm_wgmma.cuh).
// Both take the tensors a, b, c, bias, scalars (alpha, beta), d and the dims; the wgmma path also
// the TMA descriptors of a and b. The dims arrive as defines too (KT_DIM_*): layout and epilogue
// are compile-time, so a variant carries only the code of its own problem.
#include "kernels/common/cuda_common.cuh"

#define KT_PATH_simt 0
#define KT_PATH_mma 1
#define KT_PATH_wgmma 2

namespace kt::gemm {

using T = KT_T;
constexpr int kEpilogue = KT_DIM_EPILOGUE;
constexpr bool kBIsNk = KT_DIM_B_LAYOUT == 0;

// Same formulas as the reference (kernels/gemm/gemm.hpp), in float.
__device__ __forceinline__ float epilogue(float acc, float alpha, float beta, const T* c, const T* bias,
                                          long long row, long long col, long long n) {
  const float x = alpha * acc;
  if constexpr (kEpilogue == 1) return x + beta * to_float(c[row * n + col]);
  if constexpr (kEpilogue == 2) return x + to_float(bias[col]);
  if constexpr (kEpilogue == 3) {
    const float y = x + to_float(bias[col]);
    return 0.5f * y * (1.f + erff(y * 0.70710678118654752f));
  }
  if constexpr (kEpilogue == 4) {
    const float y = x + to_float(bias[col]);
    return y / (1.f + expf(-y));
  }
  if constexpr (kEpilogue == 5) return x + to_float(bias[col]) + beta * to_float(c[row * n + col]);
  return x;
}

// The epilogue of D[row, col] and D[row, col + 1] (the pair a tensor-core thread holds), stored
// as one aligned access when both exist and n is even, else element by element.
__device__ __forceinline__ void store_pair(T* d, float v0, float v1, long long row, long long col, long long n,
                                           float alpha, float beta, const T* c, const T* bias) {
  if (col + 1 < n && n % 2 == 0) {
    Packed<T, 2> pair;
    pair.elements.v[0] = from_float<T>(epilogue(v0, alpha, beta, c, bias, row, col, n));
    pair.elements.v[1] = from_float<T>(epilogue(v1, alpha, beta, c, bias, row, col + 1, n));
    *reinterpret_cast<decltype(pair.raw)*>(d + row * n + col) = pair.raw;
  } else {
    if (col < n) d[row * n + col] = from_float<T>(epilogue(v0, alpha, beta, c, bias, row, col, n));
    if (col + 1 < n) d[row * n + col + 1] = from_float<T>(epilogue(v1, alpha, beta, c, bias, row, col + 1, n));
  }
}

}  // namespace kt::gemm

#if KT_PATH == KT_PATH_wgmma
#include "kernels/gemm/gemm_wgmma.cuh"
#elif KT_PATH == KT_PATH_mma
#include "kernels/gemm/gemm_mma.cuh"
#else
#include "kernels/gemm/gemm_simt.cuh"
#endif
