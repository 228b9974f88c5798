// SwiGLU on CUDA: out[r, c] = silu(x[r, c]) * x[r, cols + c]. Each thread handles ITEMS groups
// of VEC adjacent outputs; blocks walk the flattened output in a grid-stride loop.
// Defines (search_spaces/swiglu.cuda.json): KT_BLOCK_THREADS, KT_VECTOR_BYTES, KT_ITEMS,
// KT_BLOCKS_PER_SM (0: enough blocks for one pass, else a persistent grid), KT_FAST_EXP
// (1: __expf, 0: expf); KT_T; KT_DIM_COLS.
#include "kernels/common/cuda_common.cuh"

namespace {

using T = KT_T;
constexpr int kVec = KT_VECTOR_BYTES / int(sizeof(T)) > 0 ? KT_VECTOR_BYTES / int(sizeof(T)) : 1;
constexpr long long kCols = KT_DIM_COLS;
// Vector accesses need every row (and the up half) to start on a vector boundary.
constexpr bool kAligned = kCols % kVec == 0;

__device__ __forceinline__ float silu(float g) {
#if KT_FAST_EXP
  return g / (1.f + __expf(-g));
#else
  return g / (1.f + expf(-g));
#endif
}

}  // namespace

extern "C" __global__ void __launch_bounds__(KT_BLOCK_THREADS)
    swiglu_kernel(const T* __restrict__ x, T* __restrict__ out, long long rows, long long cols) {
  const long long groups_per_row = (cols + kVec - 1) / kVec;
  const long long groups = rows * groups_per_row;
  const long long stride = (long long)gridDim.x * KT_BLOCK_THREADS * KT_ITEMS;
  for (long long base = (long long)blockIdx.x * KT_BLOCK_THREADS * KT_ITEMS + threadIdx.x; base < groups;
       base += stride) {
#pragma unroll
    for (int item = 0; item < KT_ITEMS; ++item) {
      const long long group = base + (long long)item * KT_BLOCK_THREADS;
      if (group >= groups) break;
      const long long row = group / groups_per_row;
      const long long col = (group % groups_per_row) * kVec;
      const T* gate = x + row * 2 * cols + col;
      const T* up = gate + cols;
      T* dst = out + row * cols + col;
      if (kAligned) {
        float g[kVec], u[kVec], y[kVec];
        kt::load_floats<T, kVec>(gate, g);
        kt::load_floats<T, kVec>(up, u);
#pragma unroll
        for (int v = 0; v < kVec; ++v) y[v] = silu(g[v]) * u[v];
        kt::store_floats<T, kVec>(dst, y);
      } else {
        for (int v = 0; v < kVec && col + v < cols; ++v)
          dst[v] = kt::from_float<T>(silu(kt::to_float(gate[v])) * kt::to_float(up[v]));
      }
    }
  }
}
