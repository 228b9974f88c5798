// Grouped GEMM on CUDA and HIP (kernels/grouped_gemm/grouped_gemm.hpp has the problem) on gemm's
// paths (kernels/gemm/):
//   simt, mma - gemm's one-tile paths (any GPU; mma.sync on sm_80 and later) over a grid that
//               covers the tiles of every group: each block walks the group sizes to find its
//               group and its tile in it, then runs gemm's tile on that group's rows of A and D
//               and its weight; blocks past the last group's tiles return at once (the grid is
//               sized for any split of m);
//   wgmma     - Hopper (sm_90a): gemm's producer and consumer warpgroups over one ring of TMA
//               stages, run group after group with a persistent grid. The groups' tiles are dealt
//               round-robin over the blocks as one sequence (block b takes every gridDim.x-th
//               tile, counted across the groups, so small groups do not leave blocks idle); the
//               TMA views are A [m, k] and B [experts·n, k], each group's GEMM offset into them
//               (Operands::a_row0, b_row0). A box that reaches past a group's rows or an expert's
//               n reads the next one's, which is computed but never stored.
// B is [n,k] per expert and there is no epilogue, as gemm's compile-time dims say below.
#define KT_PATH_simt 0
#define KT_PATH_mma 1
#define KT_PATH_wgmma 2
#define KT_DIM_B_LAYOUT 0
#define KT_DIM_EPILOGUE 0

#include "kernels/gemm/gemm_common.cuh"
#if KT_PATH == KT_PATH_wgmma
#include "kernels/gemm/gemm_wgmma.cuh"
#elif KT_PATH == KT_PATH_mma
#include "kernels/gemm/gemm_mma.cuh"
#else
#include "kernels/gemm/gemm_simt.cuh"
#endif

#if KT_PATH == KT_PATH_wgmma
static_assert(KT_SPLIT_K == 1 && KT_CLUSTER_M == 1, "grouped wgmma runs without split-K and clusters");

extern "C" __global__ void __launch_bounds__(kt::gemm::kThreads, 1)
    grouped_gemm_kernel(const kt::gemm::T* __restrict__ a, const kt::gemm::T* __restrict__ b,
                        const int* __restrict__ group_sizes, kt::gemm::T* __restrict__ d, long long m, long long experts,
                        long long n, long long k, const __grid_constant__ kt::hopper::TensorMap tma_a,
                        const __grid_constant__ kt::hopper::TensorMap tma_b) {
  using namespace kt::gemm;
  (void)m;
  const Ring ring = make_ring();
  const RowStatistics statistics(nullptr, 0, BM);
  const bool producer = threadIdx.x / 128 == 0;
  if (producer) {
#if KT_CONSUMERS > 1
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
#endif
    if (threadIdx.x != 0) return;
  } else {
#if KT_CONSUMERS > 1
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
#endif
  }
  // The producer and the consumers walk the same groups and tiles, the ring's stage and phase
  // running on from one group's GEMM to the next.
  int stage = 0;
  unsigned phase = 0;
  const long long blocks = gridDim.x, tiles_n = (n + BN - 1) / BN;
  long long row = 0, dealt = 0;  // rows of the groups before g; their tiles
  for (long long g = 0; g < experts; ++g) {
    const long long rows = group_sizes[g], tiles = (rows + BM - 1) / BM * tiles_n;
    if (tiles > 0) {
      // This block's first tile of the group: the tile whose place in the whole sequence is
      // this block's next turn.
      const long long first = ((static_cast<long long>(blockIdx.x) - dealt) % blocks + blocks) % blocks;
      const Operands group{a + row * k, b + g * n * k, nullptr, nullptr, d + row * n, rows, n, k, 1.0f, 0.0f,
                           first, blocks, row, g * n};
      if (producer)
        produce(group, PlainA{}, statistics, tma_a, tma_b, TileSchedule{}, ring, stage, phase);
      else
        consume<PlainA, 0>(group, PlainA{}, statistics, TileSchedule{}, ring, nullptr, stage, phase);
    }
    row += rows;
    dealt += tiles;
  }
}
#else
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
#endif
