// Residual add + LayerNorm on CUDA: s = x + residual in float, written rounded to `sum_out` as
// it is formed; LayerNorm then normalises the unrounded float s, which stays stored (registers or
// shared memory) as kernels/residual_layernorm/residual_layernorm.hpp defines. x and residual are
// read once. The LayerNorm part is layernorm.cu's (kernels/layernorm/cuda_layernorm_row.cuh);
// rows are shared out, stored and reduced by kernels/common/cuda_rows.cuh.
// Defines (search_spaces/residual_layernorm.cuda.json): KT_BLOCK_THREADS, KT_THREADS_PER_ROW,
// KT_VECTOR_BYTES, KT_BLOCKS_PER_SM (launch geometry only), KT_CLUSTER_SIZE, KT_ROW_STORAGE,
// KT_STREAMING; KT_T; KT_DIM_COLS.
#include "kernels/layernorm/cuda_layernorm_row.cuh"

extern "C" __global__ void __launch_bounds__(KT_BLOCK_THREADS)
    residual_layernorm_kernel(const kt::rows::T* __restrict__ x, const kt::rows::T* __restrict__ residual,
                              const kt::rows::T* __restrict__ gamma, const kt::rows::T* __restrict__ beta,
                              kt::rows::T* __restrict__ out, kt::rows::T* __restrict__ sum_out, long long rows,
                              long long cols) {
  using namespace kt::rows;
  Reducer reduce;
  for_each_row(rows, cols, [&](long long row, bool active) {
    const long long offset = (active ? row : 0) * row_cols();
    RowValues values;
    float sum = 0.f;
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      float item[kVec], r[kVec];
      load_item<kHint>(x + offset, i, item, 0.f);
      load_item<kHint>(residual + offset, i, r, 0.f);
#pragma unroll
      for (int v = 0; v < kVec; ++v) {
        item[v] += r[v];
        sum += item[v];
      }
      if (active && item_present(i)) store_item(sum_out + offset, i, item);
      put_item(values, i, item);
    }
    kt::layernorm_row(values, sum, reduce, active, gamma, beta, out + offset);
  });
}
