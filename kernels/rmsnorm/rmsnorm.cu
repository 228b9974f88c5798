// RMSNorm on CUDA: y = x * rsqrt(mean(x^2) + eps) * weight, eps = 1e-6, arithmetic in float.
// Rows are shared out, stored and reduced by kernels/common/cuda_rows.cuh: one group of
// THREADS_PER_ROW threads per row (split over a cluster of CLUSTER_SIZE blocks when that is
// above 1), the row kept in registers or shared memory between its single read and the write.
// Defines (search_spaces/rmsnorm.cuda.json): KT_BLOCK_THREADS, KT_THREADS_PER_ROW,
// KT_VECTOR_BYTES, KT_BLOCKS_PER_SM (0: one block per row group, else a persistent grid; read by
// the launch geometry only), KT_CLUSTER_SIZE, KT_ROW_STORAGE, KT_STREAMING; KT_T; KT_DIM_COLS.
#include "kernels/common/cuda_rows.cuh"

namespace {
constexpr float kEpsilon = 1e-6f;
}

extern "C" __global__ void __launch_bounds__(KT_BLOCK_THREADS)
    rmsnorm_kernel(const kt::rows::T* __restrict__ x, const kt::rows::T* __restrict__ weight,
                   kt::rows::T* __restrict__ out, long long rows, long long cols) {
  using namespace kt::rows;
  Reducer reduce;
  for_each_row(rows, cols, [&](long long row, bool active) {
    const long long offset = (active ? row : 0) * row_cols();
    RowValues values;
    float sum_sq = 0.f;
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      float item[kVec];
      load_item<kHint>(x + offset, i, item, 0.f);
#pragma unroll
      for (int v = 0; v < kVec; ++v) sum_sq += item[v] * item[v];
      put_item(values, i, item);
    }
    const float inv_rms = rsqrtf(reduce.sum(sum_sq) / float(row_cols()) + kEpsilon);
    if (!active) return;
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      if (!item_present(i)) continue;
      float item[kVec], w[kVec];
      get_item(values, i, item);
      load_item<kt::kCacheDefault>(weight, i, w, 0.f);
#pragma unroll
      for (int v = 0; v < kVec; ++v) item[v] *= inv_rms * w[v];
      store_item(out + offset, i, item);
    }
  });
}
