// LayerNorm + Linear on CUDA and HIP (kernels/layernorm_linear/layernorm_linear.hpp has the
// problem): gemm's paths (kernels/gemm/gemm.cu) with A = x normalised on its way in, W as
// B [n, k] and the bias epilogue. The row statistics are taken once per launch by the GEMM's own
// blocks and shared through the workspace (RowStatistics, kernels/gemm/gemm_common.cuh); LN(x)
// never goes to memory.
//   simt  - any GPU (also AMD through hiprtc): elements normalised as they are staged;
//   mma   - sm_80 and later, fp16/bf16: each landed slice normalised in shared memory;
//   wgmma - Hopper, fp16/bf16, as `normalise` says:
//           on_load: each consumer warpgroup normalises its rows of slice s + 1 in shared memory
//                    under slice s's wgmma;
//           written: the row-statistics jobs also write LN(x) once, to the workspace, and the
//                    GEMM reads it by TMA as a plain A, the producer waiting for a tile's rows
//                    to be counted before it loads them (the issue's "LN(x) written, then the
//                    GEMM", in one launch: the GEMM starts on the first rows while later rows
//                    are still being normalised).
// The workspace holds LN(x) first ([m, k], 16-byte rounded; written only, so that its TMA
// descriptor starts at the workspace), then split-K's sums and tile counters (wgmma with
// split_k > 1), then the row statistics.
#define KT_PATH_simt 0
#define KT_PATH_mma 1
#define KT_PATH_wgmma 2
#define KT_NORMALISE_on_load 0
#define KT_NORMALISE_written 1
#ifndef KT_NORMALISE
#define KT_NORMALISE KT_NORMALISE_on_load
#endif
// As gemm's problem: W is nn.Linear's [n, k]; y = 1 * LN(x)·Wᵀ + bias.
#define KT_DIM_B_LAYOUT 0
#define KT_DIM_EPILOGUE 2

#include "kernels/gemm/gemm_common.cuh"
#if KT_PATH == KT_PATH_wgmma
#include "kernels/gemm/gemm_wgmma.cuh"
#elif KT_PATH == KT_PATH_mma
#include "kernels/gemm/gemm_mma.cuh"
#else
#include "kernels/gemm/gemm_simt.cuh"
#endif

namespace kt::gemm {
constexpr float kEpsilon = 1e-5f;  // kLayerNormLinearEpsilon
}  // namespace kt::gemm

#if KT_PATH == KT_PATH_wgmma
extern "C" __global__ void __launch_bounds__(kt::gemm::kThreads, 1)
    layernorm_linear_kernel(const kt::gemm::T* __restrict__ x, const kt::gemm::T* __restrict__ gamma,
                            const kt::gemm::T* __restrict__ beta, const kt::gemm::T* __restrict__ w,
                            const kt::gemm::T* __restrict__ bias, kt::gemm::T* __restrict__ y, long long m, long long n,
                            long long k, const __grid_constant__ kt::hopper::TensorMap tma_a,
                            const __grid_constant__ kt::hopper::TensorMap tma_w, unsigned char* __restrict__ workspace) {
  using namespace kt::gemm;
  const Operands operands{x, w, nullptr, bias, y, m, n, k, 1.f, 0.f, blockIdx.x, gridDim.x};
  constexpr bool kWritten = KT_NORMALISE == KT_NORMALISE_written;
  T* normalised = reinterpret_cast<T*>(workspace);
  const long long normalised_bytes = kWritten ? (m * k * static_cast<long long>(sizeof(T)) + 15) / 16 * 16 : 0;
  float* split = reinterpret_cast<float*>(workspace + normalised_bytes);
  float* statistics = split + (kSplitK > 1 ? m * n + ((m + BM - 1) / BM) * ((n + BN - 1) / BN) : 0);
  // tma_a views x (on_load) or LN(x) in the workspace (written): family.cpp's tensor_maps().
  if constexpr (kWritten)
    wgmma_gemm(operands, NormalisedRowsA{gamma, beta, kEpsilon, statistics, normalised}, &tma_a, &tma_w, split);
  else
    wgmma_gemm(operands, LayerNormA{gamma, beta, kEpsilon, statistics}, &tma_a, &tma_w, split);
}
#else
extern "C" __global__ void __launch_bounds__(kt::gemm::kThreads)
    layernorm_linear_kernel(const kt::gemm::T* __restrict__ x, const kt::gemm::T* __restrict__ gamma,
                            const kt::gemm::T* __restrict__ beta, const kt::gemm::T* __restrict__ w,
                            const kt::gemm::T* __restrict__ bias, kt::gemm::T* __restrict__ y, long long m, long long n,
                            long long k, float* __restrict__ workspace) {
  using namespace kt::gemm;
  const Operands operands{x, w, nullptr, bias, y, m, n, k, 1.f, 0.f, blockIdx.x};
#if KT_PATH == KT_PATH_mma
  mma_gemm(operands, LayerNormA{gamma, beta, kEpsilon, workspace});
#else
  simt_gemm(operands, LayerNormA{gamma, beta, kEpsilon, workspace});
#endif
}
#endif
