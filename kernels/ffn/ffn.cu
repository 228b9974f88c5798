// The MLP block on CUDA and HIP (kernels/ffn/ffn.hpp has the problem): both GEMMs in one launch,
// on gemm's one-tile paths (kernels/gemm/gemm.cu):
//   simt - any GPU (also AMD through hiprtc);
//   mma  - sm_80 and later, fp16/bf16, k and f multiples of 8.
// The tiles of H = act(x·W1ᵀ + b1) come first, then those of y = H·W2ᵀ + b2. H lives in the
// workspace (in the problem's precision, as PyTorch's route stores it; in L2 while it fits).
// Each block takes the next tile from a counter (a ticket), so tiles start in order: a block of
// y's tile row i waits until all of H's tile row i is written (a count per tile row), and every
// H tile it waits for was taken earlier by a running block that waits for nothing. That holds
// whatever the grid's size and however the GPU schedules the blocks. The last block to finish
// leaves the counters zeroed for the next launch (the backend zeroes the workspace once).
//
// H is read while other blocks of the same launch write it: the mma path reads it with cp.async.cg
// (L2, never the SM's L1); the SIMT path's loads may go through L1, where no stale copy can
// exist, because no block reads a row of H before all of that row has been written.
//
// Workspace: H [m, f] (rounded up to 16 bytes), then the LaunchCounters
// (kernels/gemm/gemm_common.cuh) of H's tile rows.
#define KT_PATH_simt 0
#define KT_PATH_mma 1
// Both GEMMs take nn.Linear's [out, in] weights; each picks its epilogue below.
#define KT_DIM_B_LAYOUT 0
#define KT_DIM_EPILOGUE 2

#include "kernels/gemm/gemm_common.cuh"
#if KT_PATH == KT_PATH_mma
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
