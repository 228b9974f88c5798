// GeGLU on CUDA: out[r, c] = gelu(x[r, c]) * x[r, cols + c] with the exact (erf) GELU,
// gelu(g) = 0.5 * g * (1 + erf(g / sqrt(2))). Each thread handles ITEMS groups of VEC adjacent
// outputs; blocks walk the flattened output in a grid-stride loop (the layout of swiglu.cu).
// Defines (search_spaces/geglu.cuda.json): KT_BLOCK_THREADS, KT_VECTOR_BYTES, KT_ITEMS,
// KT_BLOCKS_PER_SM (0: enough blocks for one pass, else a persistent grid); KT_T; KT_DIM_COLS.
#include "kernels/common/cuda_common.cuh"

namespace {

using T = KT_T;
constexpr int kVec = KT_VECTOR_BYTES / int(sizeof(T)) > 0 ? KT_VECTOR_BYTES / int(sizeof(T)) : 1;
constexpr long long kCols = KT_DIM_COLS;
// Vector accesses need every row (and the up half) to start on a vector boundary.
constexpr bool kAligned = kCols % kVec == 0;

// Exact GELU with the full-precision erff (at most 2 ulp): no fast variant, since the usual
// approximations (tanh form, __expf-based erf) miss the fp32 tolerance or gain nothing in a
// memory-bound kernel.
__device__ __forceinline__ float gelu(float g) { return 0.5f * g * (1.f + erff(g * 0.70710678118654752f)); }

}  // namespace

extern "C" __global__ void __launch_bounds__(KT_BLOCK_THREADS)
    geglu_kernel(const T* __restrict__ x, T* __restrict__ out, long long rows, long long cols) {
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
        for (int v = 0; v < kVec; ++v) y[v] = gelu(g[v]) * u[v];
        kt::store_floats<T, kVec>(dst, y);
      } else {
        for (int v = 0; v < kVec && col + v < cols; ++v)
          dst[v] = kt::from_float<T>(gelu(kt::to_float(gate[v])) * kt::to_float(up[v]));
      }
    }
  }
}
