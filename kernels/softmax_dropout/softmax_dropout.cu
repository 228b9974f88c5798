// Softmax + dropout on CUDA: softmax as kernels/softmax/softmax.cu (one group of THREADS_PER_ROW
// threads per row, the row held in registers, row_max then row_sum reductions, expf), then each
// element is kept with probability 1 - P and scaled by 1 / (1 - P), or zeroed.
// The mask is the family's (kernels/softmax_dropout/softmax_dropout.hpp, kernels/common/philox.hpp):
// element i = row * cols + col takes word i % 4 of Philox4x32-10 group i / 4 under the family's
// seed and offset (softmax_dropout_constants.hpp, shared with the CPU code), kept iff
// philox::keep(word, float(P)). A thread handles VEC consecutive elements at a time; it computes
// the Philox groups those elements fall in (VEC / 4 groups when rows and vectors start on group
// boundaries, else up to VEC / 4 + 1 groups, including partial ones that neighbouring threads
// compute as well) and picks each element's word.
// Defines (search_spaces/softmax_dropout.cuda.json): KT_BLOCK_THREADS, KT_THREADS_PER_ROW,
// KT_VECTOR_BYTES, KT_BLOCKS_PER_SM (0: one block per row group, else a persistent grid);
// KT_T; KT_DIM_COLS (the problem's width, so the per-thread item count is a constant).
#include "kernels/common/cuda_common.cuh"
#include "kernels/common/philox.hpp"
#include "kernels/softmax_dropout/softmax_dropout_constants.hpp"

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

constexpr float kDropP = float(ktune::kSoftmaxDropoutP);
constexpr float kKeptScale = float(1.0 / (1.0 - ktune::kSoftmaxDropoutP));

// The linear index of an item's first element, row * cols + col, is a multiple of kBaseAlign
// (a power of two <= 4): col is a multiple of kVec, row * cols one of the largest power of two
// dividing cols. Its offset in its Philox group is then one of 0, kBaseAlign, ... < 4, and the
// item's kVec elements span at most kSpan groups.
constexpr long long kColsPow2 = kCols & -kCols;
constexpr int kBaseAlign = kVec < kColsPow2 ? (kVec < 4 ? kVec : 4) : (kColsPow2 < 4 ? int(kColsPow2) : 4);
constexpr int kSpan = (kVec + 3 - kBaseAlign) / 4 + 1;

__device__ __forceinline__ float negative_infinity() { return __int_as_float(0xff800000); }

// The random words of elements base .. base + kVec - 1 (linear indices in the output tensor).
__device__ __forceinline__ void dropout_words(unsigned long long base, unsigned int (&words)[kVec]) {
  namespace philox = ktune::philox;
  const philox::U32x2 key = philox::key_of(ktune::kSoftmaxDropoutSeed);
  const unsigned long long first_group = base >> 2;
  philox::U32x4 groups[kSpan];
#pragma unroll
  for (int j = 0; j < kSpan; ++j)
    groups[j] = philox::philox4x32_10(philox::counter_of(first_group + j, ktune::kSoftmaxDropoutOffset), key);
  if constexpr (kBaseAlign == 4) {
    // base % 4 == 0: element v takes word v % 4 of group v / 4.
#pragma unroll
    for (int v = 0; v < kVec; ++v) words[v] = groups[v / 4].v[v % 4];
  } else {
    // Element v takes the word at flat position first + v of the groups, first = base % 4.
    const int first = int(base & 3u);
#pragma unroll
    for (int v = 0; v < kVec; ++v) {
      unsigned int word = 0;
#pragma unroll
      for (int f = 0; f < 4; f += kBaseAlign)
        if (first == f) word = groups[(f + v) / 4].v[(f + v) % 4];
      words[v] = word;
    }
  }
}

}  // namespace

extern "C" __global__ void __launch_bounds__(KT_BLOCK_THREADS)
    softmax_dropout_kernel(const T* __restrict__ x, T* __restrict__ out, long long rows, long long cols) {
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
    const float scale = kKeptScale / sum;
    T* dst = out + row * cols;
    const unsigned long long row_base = (unsigned long long)row * (unsigned long long)cols;
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      const int col = (i * kThreadsPerRow + lane) * kVec;
      if (!kFull && col >= kCols) continue;  // nothing of this item is in the row
      unsigned int words[kVec];
      dropout_words(row_base + (unsigned long long)col, words);
#pragma unroll
      for (int v = 0; v < kVec; ++v) values[i][v] = ktune::philox::keep(words[v], kDropP) ? values[i][v] * scale : 0.f;
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
