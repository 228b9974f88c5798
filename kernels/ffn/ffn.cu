// The MLP block on CUDA and HIP (kernels/ffn/ffn.hpp has the problem): both GEMMs in one launch,
// on gemm's paths (kernels/gemm/gemm.cu):
//   simt  - any GPU (also AMD through hiprtc);
//   mma   - sm_80 and later, fp16/bf16, k and f multiples of 8;
//   wgmma - Hopper, fp16/bf16, k and f multiples of 8: TMA and wgmma; the second GEMM loads H by
//           TMA through a descriptor of the workspace, its producer waiting for the tile row of H
//           it needs before it loads (ReadyRowsA, kernels/gemm/gemm_common.cuh).
// The tiles of H = act(x·W1ᵀ + b1) come first, then those of y = H·W2ᵀ + b2. H lives in the
// workspace (in the problem's precision, as PyTorch's route stores it; in L2 while it fits).
// Tiles are taken from counters (tickets), so they start in order: on simt and mma a block takes
// one tile, H's tiles first; on wgmma a block's producer takes H's tiles until none are left,
// then y's (as many blocks as tiles, or one per SM). A tile of y's tile row i waits until all of
// H's tile row i is written (a count per tile row), and every H tile it waits for was taken
// earlier by a running block that waits for nothing before it finishes that tile. That holds
// whatever the grid's size and however the GPU schedules the blocks. The last block to finish
// leaves the counters zeroed for the next launch (the backend zeroes the workspace once).
//
// H is read while other blocks of the same launch write it: the mma path reads it with cp.async.cg
// (L2, never the SM's L1); the SIMT path's loads may go through L1, where no stale copy can
// exist, because no block reads a row of H before all of that row has been written; on the wgmma
// path H's writers and its reader each fence the async proxy (TMA) against the generic one.
//
// Workspace: H [m, f] (rounded up to 16 bytes), then the LaunchCounters
// (kernels/gemm/gemm_common.cuh) of H's tile rows.
#define KT_PATH_simt 0
#define KT_PATH_mma 1
#define KT_PATH_wgmma 2
// Both GEMMs take nn.Linear's [out, in] weights; each picks its epilogue below.
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

// The first GEMM's epilogue: the bias, then the activation (ffn::Activation).
constexpr int kUpEpilogue = KT_DIM_ACTIVATION == 1 ? kBiasGeluTanh : (KT_DIM_ACTIVATION == 2 ? 4 : 3);

__device__ __forceinline__ long long tiles_of(long long rows, long long cols) {
  return ((rows + BM - 1) / BM) * ((cols + BN - 1) / BN);
}

}  // namespace kt::gemm

#if KT_PATH == KT_PATH_wgmma
// The TMA descriptors: x [m, k], W1 [f, k], H [m, f] (the workspace) and W2 [k, f]
// (kernels/ffn/family.cpp's tensor_maps()). One ring of stages runs through both GEMMs: the
// producer hands out H's tiles from the first ticket, then y's from the second (waiting for each
// y tile's row of H), and the consumers follow, counting each tile of H they store.
extern "C" __global__ void __launch_bounds__(kt::gemm::kThreads, 1)
    ffn_kernel(const kt::gemm::T* __restrict__ x, const kt::gemm::T* __restrict__ w1, const kt::gemm::T* __restrict__ b1,
               const kt::gemm::T* __restrict__ w2, const kt::gemm::T* __restrict__ b2, kt::gemm::T* __restrict__ y,
               long long m, long long k, long long f, long long, const __grid_constant__ kt::hopper::TensorMap tma_x,
               const __grid_constant__ kt::hopper::TensorMap tma_w1, const __grid_constant__ kt::hopper::TensorMap tma_h,
               const __grid_constant__ kt::hopper::TensorMap tma_w2, unsigned char* __restrict__ workspace) {
  using namespace kt::gemm;
  T* hidden = reinterpret_cast<T*>(workspace);
  const long long hidden_bytes = (m * f * static_cast<long long>(sizeof(T)) + 15) / 16 * 16;
  const long long tiles_m = (m + BM - 1) / BM;
  const LaunchCounters counters(reinterpret_cast<unsigned*>(workspace + hidden_bytes), tiles_m, 2);
  const Operands up{x, w1, nullptr, b1, hidden, m, f, k, 1.f, 0.f};
  const Operands down{hidden, w2, nullptr, b2, y, m, k, f, 1.f, 0.f};
  const ReadyRowsA rows_of_h{counters, static_cast<unsigned>((f + BN - 1) / BN)};
  const TileSchedule up_schedule{counters.ticket, counters.per_row}, down_schedule{counters.ticket + 1};
  const RowStatistics no_statistics(nullptr, m, BM);

  const Ring ring = make_ring();
  int stage = 0;
  unsigned phase = 0;
  if (threadIdx.x < 128) {
#if KT_CONSUMERS > 1
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
#endif
    if (threadIdx.x == 0) {
      produce(up, PlainA{}, no_statistics, tma_x, tma_w1, up_schedule, ring, stage, phase);
      produce(down, rows_of_h, no_statistics, tma_h, tma_w2, down_schedule, ring, stage, phase);
    }
  } else {
#if KT_CONSUMERS > 1
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
#endif
    consume<PlainA, kUpEpilogue>(up, PlainA{}, no_statistics, up_schedule, ring, nullptr, stage, phase);
    consume<ReadyRowsA, 2>(down, rows_of_h, no_statistics, down_schedule, ring, nullptr, stage, phase);
  }
  __syncthreads();  // every wait of this block is over
  if (threadIdx.x == 0) counters.finish_block();
}
#else
extern "C" __global__ void __launch_bounds__(kt::gemm::kThreads)
    ffn_kernel(const kt::gemm::T* __restrict__ x, const kt::gemm::T* __restrict__ w1, const kt::gemm::T* __restrict__ b1,
               const kt::gemm::T* __restrict__ w2, const kt::gemm::T* __restrict__ b2, kt::gemm::T* __restrict__ y,
               long long m, long long k, long long f, long long, unsigned char* __restrict__ workspace) {
  using namespace kt::gemm;
  T* hidden = reinterpret_cast<T*>(workspace);
  const long long hidden_bytes = (m * f * static_cast<long long>(sizeof(T)) + 15) / 16 * 16;
  // Per tile row of H, the number of its tiles written.
  const LaunchCounters counters(reinterpret_cast<unsigned*>(workspace + hidden_bytes), (m + BM - 1) / BM);
  const long long up_tiles = tiles_of(m, f), up_tiles_per_row = (f + BN - 1) / BN;

  const long long tile = counters.take();
  if (tile < up_tiles) {
#if KT_PATH == KT_PATH_mma
    mma_gemm<PlainA, kUpEpilogue>(Operands{x, w1, nullptr, b1, hidden, m, f, k, 1.f, 0.f, tile}, PlainA{});
#else
    simt_gemm<PlainA, kUpEpilogue>(Operands{x, w1, nullptr, b1, hidden, m, f, k, 1.f, 0.f, tile}, PlainA{});
#endif
    __threadfence();  // this tile of H is visible before it is counted
    __syncthreads();
    if (threadIdx.x == 0) counters.count(tile / up_tiles_per_row, 1u);
  } else {
    const long long down_tile = tile - up_tiles;
    if (threadIdx.x == 0) counters.wait(down_tile / ((k + BN - 1) / BN), static_cast<unsigned>(up_tiles_per_row));
    __syncthreads();
#if KT_PATH == KT_PATH_mma
    mma_gemm<PlainA, 2>(Operands{hidden, w2, nullptr, b2, y, m, k, f, 1.f, 0.f, down_tile}, PlainA{});
#else
    simt_gemm<PlainA, 2>(Operands{hidden, w2, nullptr, b2, y, m, k, f, 1.f, 0.f, down_tile}, PlainA{});
#endif
  }
  if (threadIdx.x == 0) counters.finish_block();  // this block reads no more counters
}
#endif
