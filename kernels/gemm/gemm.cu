// GEMM on CUDA (kernels/gemm/gemm.hpp has the problem). The "path" parameter picks the kernel:
//   simt  - any GPU, any precision, layout and shape: shared-memory tiles, fp32 FMA
//           (kernels/gemm/gemm_simt.cuh);
//   mma   - sm_80 and later, fp16/bf16, either layout, 16-byte aligned rows: cp.async stages,
//           ldmatrix and mma.sync m16n8k16 (kernels/gemm/gemm_mma.cuh);
//   wgmma - Hopper (sm_90a), tf32/fp16/bf16/fp8 e4m3 with B as [n,k] and rows of k a multiple of
//           16 bytes: TMA loads into a
//           multi-stage shared-memory pipeline on mbarriers, one producer warp feeding consumer
//           warpgroups that run wgmma (kernels/gemm/gemm_wgmma.cuh).
// Each path is a device function over the operands (kernels/gemm/gemm_common.cuh); the entry below
// takes the tensors a, b, c, bias, scalars (alpha, beta), d and the dims, and on the wgmma path
// the TMA descriptors of a and b. layernorm_linear's entry calls the same paths with A's rows
// normalised. The dims arrive as defines too (KT_DIM_*): layout and epilogue are compile-time,
// so a variant carries only the code of its own problem.
#define KT_PATH_simt 0
#define KT_PATH_mma 1
#define KT_PATH_wgmma 2

#include "kernels/gemm/gemm_common.cuh"
#if KT_PATH == KT_PATH_wgmma
#include "kernels/gemm/gemm_wgmma.cuh"
#elif KT_PATH == KT_PATH_mma
#include "kernels/gemm/gemm_mma.cuh"
#else
#include "kernels/gemm/gemm_simt.cuh"
#endif

#if KT_PATH == KT_PATH_wgmma
extern "C" __global__ void __launch_bounds__(kt::gemm::kThreads, 1)
    gemm_kernel(const kt::gemm::T* __restrict__ a, const kt::gemm::T* __restrict__ b, const kt::gemm::T* __restrict__ c,
                const kt::gemm::T* __restrict__ bias, const kt::gemm::T* __restrict__ scalars, kt::gemm::T* __restrict__ d,
                long long m, long long n, long long k, long long, long long,
                const __grid_constant__ kt::hopper::TensorMap tma_a, const __grid_constant__ kt::hopper::TensorMap tma_b,
                float* __restrict__ workspace) {
  using namespace kt::gemm;
  wgmma_gemm(Operands{a, b, c, bias, d, m, n, k, kt::to_float(scalars[0]), kt::to_float(scalars[1]), blockIdx.x, gridDim.x},
             PlainA{}, &tma_a, &tma_b, workspace);
}
#else
extern "C" __global__ void __launch_bounds__(kt::gemm::kThreads)
    gemm_kernel(const kt::gemm::T* __restrict__ a, const kt::gemm::T* __restrict__ b, const kt::gemm::T* __restrict__ c,
                const kt::gemm::T* __restrict__ bias, const kt::gemm::T* __restrict__ scalars, kt::gemm::T* __restrict__ d,
                long long m, long long n, long long k, long long, long long) {
  using namespace kt::gemm;
  const Operands operands{a, b, c, bias, d, m, n, k, kt::to_float(scalars[0]), kt::to_float(scalars[1]), blockIdx.x};
#if KT_PATH == KT_PATH_mma
  mma_gemm(operands, PlainA{});
#else
  simt_gemm(operands, PlainA{});
#endif
}
#endif
