// Grouped GEMM on CUDA and HIP (kernels/grouped_gemm/grouped_gemm.hpp has the problem): gemm's
// one-tile paths (kernels/gemm/), `simt` on any GPU and `mma` (mma.sync) on sm_80 and later, over
// a grid that covers the tiles of every group. Each block walks the group sizes to find its group
// and its tile in it, then runs gemm's tile on that group's rows of A and D and its weight; blocks
// past the last group's tiles return at once (the grid is sized for any split of m). B is [n,k]
// per expert and there is no epilogue, as gemm's compile-time dims say below.
#define KT_PATH_simt 0
#define KT_PATH_mma 1
#define KT_DIM_B_LAYOUT 0
#define KT_DIM_EPILOGUE 0

#include "kernels/gemm/gemm_common.cuh"
#if KT_PATH == KT_PATH_mma
#include "kernels/gemm/gemm_mma.cuh"
#else
#include "kernels/gemm/gemm_simt.cuh"
#endif

extern "C" __global__ void __launch_bounds__(kt::gemm::kThreads)
    grouped_gemm_kernel(const kt::gemm::T* __restrict__ a, const kt::gemm::T* __restrict__ b,
                        const int* __restrict__ group_sizes, kt::gemm::T* __restrict__ d, long long m, long long experts,
                        long long n, long long k) {
  using namespace kt::gemm;
  (void)m;
  const long long tiles_n = (n + BN - 1) / BN;
  long long tile = blockIdx.x, row = 0;
  for (long long g = 0; g < experts; ++g) {
    const long long rows = group_sizes[g], tiles = (rows + BM - 1) / BM * tiles_n;
    if (tile < tiles) {
      const Operands operands{a + row * k, b + g * n * k, nullptr, nullptr, d + row * n, rows, n, k, 1.0f, 0.0f, tile};
#if KT_PATH == KT_PATH_mma
      mma_gemm(operands, PlainA{});
#else
      simt_gemm(operands, PlainA{});
#endif
      return;
    }
    tile -= tiles;
    row += rows;
  }
}
