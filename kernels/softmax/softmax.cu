// Softmax on CUDA: one group of THREADS_PER_ROW threads per row, ROWS_PER_BLOCK rows per block,
// the row held in registers from its single read to the write, VECTOR_BYTES-wide accesses.
// Per row: the maximum (a row_max reduction), e = expf(x - max) in place with its sum (a row_sum
// reduction), then out = e * (1 / sum). All arithmetic in float; expf, not __expf.
// Defines (search_spaces/softmax.cuda.json): KT_BLOCK_THREADS, KT_THREADS_PER_ROW,
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

__device__ __forceinline__ float negative_infinity() { return __int_as_float(0xff800000); }

}  // namespace

extern "C" __global__ void __launch_bounds__(KT_BLOCK_THREADS)
    softmax_kernel(const T* __restrict__ x, T* __restrict__ out, long long rows, long long cols) {
  __shared__ float scratch[kRowsPerBlock * (kThreadsPerRow > 32 ? kThreadsPerRow / 32 : 1)];
  const int lane = threadIdx.x % kThreadsPerRow;
  for (long long row = (long long)blockIdx.x * kRowsPerBlock + threadIdx.x / kThreadsPerRow; ;
       row += (long long)gridDim.x * kRowsPerBlock) {
    // Every thread of the block takes part in each reduction round, rows past the end included.
    const bool active = row < rows;
    if (__syncthreads_or(active) == 0) break;
    const T* in = x + (active ? row : 0) * cols;
    float values[kItems][kVec];
    // Elements past the end of the row read as -inf: they never win the maximum.
    float max = negative_infinity();
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      const int col = (i * kThreadsPerRow + lane) * kVec;
      if (kAligned && (kFull || col + kVec <= kCols)) {
        kt::load_floats<T, kVec>(in + col, values[i]);
      } else {
#pragma unroll
        for (int v = 0; v < kVec; ++v)
          values[i][v] = col + v < kCols ? kt::to_float(in[col + v]) : negative_infinity();
      }
#pragma unroll
      for (int v = 0; v < kVec; ++v) max = fmaxf(max, values[i][v]);
    }
    max = kt::row_max<kThreadsPerRow, kRowsPerBlock>(max, scratch);
    float sum = 0.f;
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      const int col = (i * kThreadsPerRow + lane) * kVec;
#pragma unroll
      for (int v = 0; v < kVec; ++v) {
        values[i][v] = kFull || col + v < kCols ? expf(values[i][v] - max) : 0.f;
        sum += values[i][v];
      }
    }
    sum = kt::row_sum<kThreadsPerRow, kRowsPerBlock>(sum, scratch);
    if (!active) continue;
    const float inv_sum = 1.f / sum;
    T* dst = out + row * cols;
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      const int col = (i * kThreadsPerRow + lane) * kVec;
#pragma unroll
      for (int v = 0; v < kVec; ++v) values[i][v] *= inv_sum;
      if (kAligned && (kFull || col + kVec <= kCols)) {
        kt::store_floats<T, kVec>(dst + col, values[i]);
      } else {
#pragma unroll
        for (int v = 0; v < kVec; ++v)
          if (col + v < kCols) dst[col + v] = kt::from_float<T>(values[i][v]);
      }
    }
  }
}
