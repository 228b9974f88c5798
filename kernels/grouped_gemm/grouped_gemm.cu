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

namespace kt::gemm {

// The groups of one launch as a block walks them: next() gives the GEMM of the next group with
// tiles, its first tile this block's next turn in the sequence of every group's tiles, dealt
// round-robin over the grid; false past the last group. The producer and the consumers each walk
// them in their own loop.
struct GroupWalk {
  const T* a;
  const T* b;
  const int* sizes;
  T* d;
  long long experts, n, k;
  long long g = 0, row = 0, dealt = 0;  // the next group; rows and tiles of the groups before it

  __device__ __forceinline__ bool next(Operands& o) {
    const long long blocks = gridDim.x, tiles_n = (n + BN - 1) / BN;
    for (; g < experts; ++g) {
      const long long rows = sizes[g], tiles = (rows + BM - 1) / BM * tiles_n;
      const long long first = ((static_cast<long long>(blockIdx.x) - dealt) % blocks + blocks) % blocks;
      o = Operands{a + row * k, b + g * n * k, nullptr, nullptr, d + row * n, rows, n, k, 1.0f, 0.0f, first, blocks,
                   row, g * n};
      row += rows;
      dealt += tiles;
      if (tiles > 0) {
        ++g;
        return true;
      }
    }
    return false;
  }
};

}  // namespace kt::gemm

extern "C" __global__ void __launch_bounds__(kt::gemm::kThreads, 1)
    grouped_gemm_kernel(const kt::gemm::T* __restrict__ a, const kt::gemm::T* __restrict__ b,
                        const int* __restrict__ group_sizes, kt::gemm::T* __restrict__ d, long long m, long long experts,
                        long long n, long long k, const __grid_constant__ kt::hopper::TensorMap tma_a,
                        const __grid_constant__ kt::hopper::TensorMap tma_b) {
  using namespace kt::gemm;
  (void)m;
  const Ring ring = make_ring();
  const RowStatistics statistics(nullptr, 0, BM);
  // The producer and the consumers walk the same groups and tiles, the ring's stage and phase
  // running on from one group's GEMM to the next. As in wgmma_gemm and ffn, each role's whole
  // walk lies inside the branch that set its registers: were the two branches to meet again,
  // ptxas would drop every setmaxnreg of the kernel (C7507).
  int stage = 0;
  unsigned phase = 0;
  GroupWalk groups{a, b, group_sizes, d, experts, n, k};
  Operands group;
  if (threadIdx.x / 128 == 0) {
#if KT_CONSUMERS > 1
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
#endif
    if (threadIdx.x == 0)
      while (groups.next(group)) produce(group, PlainA{}, statistics, tma_a, tma_b, TileSchedule{}, ring, stage, phase);
    return;
  }
#if KT_CONSUMERS > 1
  asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
#endif
  while (groups.next(group))
    consume<PlainA, 0>(group, PlainA{}, statistics, TileSchedule{}, ring, nullptr, stage, phase);
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
