// LayerNorm on CUDA: one group of THREADS_PER_ROW threads per row, ROWS_PER_BLOCK rows per block,
// the row held in registers from its single read to the write, VECTOR_BYTES-wide accesses.
// Statistics are two-pass over the registers (mean, then the sum of squared deviations; the row
// is read from memory once), accumulated in float; biased variance, eps = 1e-5
// (kLayerNormEpsilon in kernels/layernorm/layernorm.hpp).
// Defines (search_spaces/layernorm.cuda.json): KT_BLOCK_THREADS, KT_THREADS_PER_ROW,
// KT_VECTOR_BYTES, KT_BLOCKS_PER_SM (0: one block per row group, else a persistent grid);
// KT_T; KT_DIM_COLS (the problem's width, so the per-thread item count is a constant).
#include "kernels/common/cuda_common.cuh"

namespace {

using T = KT_T;
constexpr int kThreadsPerRow = KT_THREADS_PER_ROW;
constexpr int kRowsPerBlock = KT_BLOCK_THREADS / KT_THREADS_PER_ROW;
constexpr int kVec = KT_VECTOR_BYTES / int(sizeof(T)) > 0 ? KT_VECTOR_BYTES / int(sizeof(T)) : 1;
constexpr long long kCols = KT_DIM_COLS;
constexpr int kItems = int((kCols + kThreadsPerRow * kVec - 1) / (kThreadsPerRow * kVec));
// Vector accesses need every row to start on a vector boundary.
constexpr bool kAligned = kCols % kVec == 0;
// Every element of every item lies inside the row: no bounds checks.
constexpr bool kFull = kCols % (kThreadsPerRow * kVec) == 0;
constexpr float kEpsilon = 1e-5f;

}  // namespace

extern "C" __global__ void __launch_bounds__(KT_BLOCK_THREADS)
    layernorm_kernel(const T* __restrict__ x, const T* __restrict__ gamma, const T* __restrict__ beta,
                     T* __restrict__ out, long long rows, long long cols) {
  __shared__ float scratch[kRowsPerBlock * (kThreadsPerRow > 32 ? kThreadsPerRow / 32 : 1)];
  const int lane = threadIdx.x % kThreadsPerRow;
  for (long long row = (long long)blockIdx.x * kRowsPerBlock + threadIdx.x / kThreadsPerRow; ;
       row += (long long)gridDim.x * kRowsPerBlock) {
    // Every thread of the block takes part in each reduction round, rows past the end included.
    const bool active = row < rows;
    if (__syncthreads_or(active) == 0) break;
    const T* in = x + (active ? row : 0) * cols;
    float values[kItems][kVec];
    float sum = 0.f;
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      const int col = (i * kThreadsPerRow + lane) * kVec;
      if (kAligned && (kFull || col + kVec <= kCols)) {
        kt::load_floats<T, kVec>(in + col, values[i]);
      } else {
#pragma unroll
        for (int v = 0; v < kVec; ++v) values[i][v] = col + v < kCols ? kt::to_float(in[col + v]) : 0.f;
      }
#pragma unroll
      for (int v = 0; v < kVec; ++v) sum += values[i][v];
    }
    const float mean = kt::row_sum<kThreadsPerRow, kRowsPerBlock>(sum, scratch) / float(kCols);
    // Centre the row in place; elements past the end stay out of the variance.
    float sum_sq = 0.f;
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      const int col = (i * kThreadsPerRow + lane) * kVec;
#pragma unroll
      for (int v = 0; v < kVec; ++v) {
        const float d = kFull || col + v < kCols ? values[i][v] - mean : 0.f;
        values[i][v] = d;
        sum_sq += d * d;
      }
    }
    sum_sq = kt::row_sum<kThreadsPerRow, kRowsPerBlock>(sum_sq, scratch);
    if (!active) continue;
    const float inv_std = rsqrtf(sum_sq / float(kCols) + kEpsilon);
    T* dst = out + row * cols;
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      const int col = (i * kThreadsPerRow + lane) * kVec;
      if (kAligned && (kFull || col + kVec <= kCols)) {
        float g[kVec], b[kVec];
        kt::load_floats<T, kVec>(gamma + col, g);
        kt::load_floats<T, kVec>(beta + col, b);
#pragma unroll
        for (int v = 0; v < kVec; ++v) values[i][v] = values[i][v] * inv_std * g[v] + b[v];
        kt::store_floats<T, kVec>(dst + col, values[i]);
      } else {
#pragma unroll
        for (int v = 0; v < kVec; ++v)
          if (col + v < kCols)
            dst[col + v] =
                kt::from_float<T>(values[i][v] * inv_std * kt::to_float(gamma[col + v]) + kt::to_float(beta[col + v]));
      }
    }
  }
}
