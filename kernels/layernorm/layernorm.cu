// LayerNorm on CUDA: y = (x - mean) * rsqrt(var + eps) * gamma + beta, biased variance,
// eps = 1e-5 (kLayerNormEpsilon in layernorm.hpp). The statistics are two-pass over the stored
// row (mean, then the sum of squared deviations), accumulated in float; the row is read from
// memory once. Rows are shared out, stored and reduced by kernels/common/cuda_rows.cuh (the
// residual_layernorm kernel is this one with the residual added on the way in).
// Defines (search_spaces/layernorm.cuda.json): KT_BLOCK_THREADS, KT_THREADS_PER_ROW,
// KT_VECTOR_BYTES, KT_BLOCKS_PER_SM (launch geometry only), KT_CLUSTER_SIZE, KT_ROW_STORAGE,
// KT_STREAMING; KT_T; KT_DIM_COLS.
#include "kernels/layernorm/cuda_layernorm_row.cuh"

extern "C" __global__ void __launch_bounds__(KT_BLOCK_THREADS)
    layernorm_kernel(const kt::rows::T* __restrict__ x, const kt::rows::T* __restrict__ gamma,
                     const kt::rows::T* __restrict__ beta, kt::rows::T* __restrict__ out, long long rows,
                     long long cols) {
  using namespace kt::rows;
  Reducer reduce;
  for_each_row(rows, cols, [&](long long row, bool active) {
    const long long offset = (active ? row : 0) * row_cols();
    RowValues values;
    float sum = 0.f;
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      float item[kVec];
      load_item<kHint>(x + offset, i, item, 0.f);
#pragma unroll
      for (int v = 0; v < kVec; ++v) sum += item[v];
      put_item(values, i, item);
    }
    kt::layernorm_row(values, sum, reduce, active, gamma, beta, out + offset);
  });
}
