// Softmax on CUDA: per row, the maximum, e = exp(x - max) with its sum, then out = e * (1 / sum);
// all arithmetic in float (the exponential per KT_FAST_EXP). The row part is
// kernels/softmax/cuda_softmax_row.cuh (shared with softmax_dropout); rows are shared out,
// stored and reduced by kernels/common/cuda_rows.cuh.
// Defines (search_spaces/softmax.cuda.json): KT_BLOCK_THREADS, KT_THREADS_PER_ROW,
// KT_VECTOR_BYTES, KT_BLOCKS_PER_SM (launch geometry only), KT_CLUSTER_SIZE, KT_ROW_STORAGE,
// KT_STREAMING, KT_FAST_EXP; KT_T; KT_DIM_COLS.
#include "kernels/softmax/cuda_softmax_row.cuh"

extern "C" __global__ void __launch_bounds__(KT_BLOCK_THREADS)
    softmax_kernel(const kt::rows::T* __restrict__ x, kt::rows::T* __restrict__ out, long long rows, long long cols) {
  using namespace kt::rows;
  Reducer reduce;
  for_each_row(rows, cols, [&](long long row, bool active) {
    const long long offset = (active ? row : 0) * row_cols();
    RowValues values;
    const float inv_sum = kt::softmax_row(x + offset, values, reduce);
    if (!active) return;
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      if (!item_present(i)) continue;
      float item[kVec];
      get_item(values, i, item);
#pragma unroll
      for (int v = 0; v < kVec; ++v) item[v] *= inv_sum;
      store_item(out + offset, i, item);
    }
  });
}
