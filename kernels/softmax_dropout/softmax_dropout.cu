// Softmax + dropout on CUDA: softmax as softmax.cu (kernels/softmax/cuda_softmax_row.cuh), then
// each element is kept with probability 1 - P and scaled by 1 / (1 - P), or zeroed.
// The mask is the family's (softmax_dropout.hpp, kernels/common/philox.hpp): element
// i = row * cols + col takes word i % 4 of Philox4x32-10 group i / 4 under the family's seed and
// offset (softmax_dropout_constants.hpp, shared with the CPU code), kept iff
// philox::keep(word, float(P)). A thread computes the Philox groups its VEC-element items fall
// in (VEC / 4 groups when rows and vectors start on group boundaries, else up to VEC / 4 + 1,
// including partial ones that neighbouring threads compute as well) and keeps one bit per
// element. The bits are drawn right after the row's loads are issued: the Philox arithmetic,
// which needs no row data, then runs while the loads are in flight instead of after them.
// Defines (search_spaces/softmax_dropout.cuda.json): KT_BLOCK_THREADS, KT_THREADS_PER_ROW,
// KT_VECTOR_BYTES, KT_BLOCKS_PER_SM (launch geometry only), KT_CLUSTER_SIZE, KT_ROW_STORAGE,
// KT_STREAMING; KT_T; KT_DIM_COLS.
#include "kernels/common/philox.hpp"
#include "kernels/softmax/cuda_softmax_row.cuh"
#include "kernels/softmax_dropout/softmax_dropout_constants.hpp"

namespace {

using namespace kt::rows;

constexpr float kDropP = float(ktune::kSoftmaxDropoutP);
constexpr float kKeptScale = float(1.0 / (1.0 - ktune::kSoftmaxDropoutP));

// The linear index of an item's first element, row * cols + col, is a multiple of kBaseAlign
// (a power of two <= 4): col is a multiple of kVec (slices are whole vectors), row * cols one of
// the largest power of two dividing cols. Its offset in its Philox group is then one of
// 0, kBaseAlign, ... < 4, and the item's kVec elements span at most kSpan groups.
constexpr long long kColsPow2 = kCols & -kCols;
constexpr int kBaseAlign = kVec < kColsPow2 ? (kVec < 4 ? kVec : 4) : (kColsPow2 < 4 ? int(kColsPow2) : 4);
constexpr int kSpan = (kVec + 3 - kBaseAlign) / 4 + 1;
constexpr int kMaskWords = (kItems * kVec + 31) / 32;

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

// Bit (i * kVec + v) of `mask`: whether element v of item i of this thread's share of `row` is kept.
__device__ __forceinline__ void draw_mask(long long row, unsigned int (&mask)[kMaskWords]) {
#pragma unroll
  for (int w = 0; w < kMaskWords; ++w) mask[w] = 0;
  const unsigned long long row_base = (unsigned long long)row * (unsigned long long)kCols;
#pragma unroll
  for (int i = 0; i < kItems; ++i) {
    if (!item_present(i)) continue;
    unsigned int words[kVec];
    dropout_words(row_base + (unsigned long long)item_column(i), words);
#pragma unroll
    for (int v = 0; v < kVec; ++v)
      if (ktune::philox::keep(words[v], kDropP)) mask[(i * kVec + v) / 32] |= 1u << ((i * kVec + v) % 32);
  }
}

}  // namespace

extern "C" __global__ void __launch_bounds__(KT_BLOCK_THREADS)
    softmax_dropout_kernel(const T* __restrict__ x, T* __restrict__ out, long long rows, long long cols) {
  Reducer reduce;
  for_each_row(rows, [&](long long row, bool active) {
    const long long offset = (active ? row : 0) * kCols;
    RowValues values;
    unsigned int mask[kMaskWords];
    const float scale = kKeptScale * kt::softmax_row(x + offset, values, reduce, [&] { draw_mask(row, mask); });
    if (!active) return;
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      if (!item_present(i)) continue;
      float item[kVec];
      get_item(values, i, item);
#pragma unroll
      for (int v = 0; v < kVec; ++v)
        item[v] = (mask[(i * kVec + v) / 32] >> ((i * kVec + v) % 32)) & 1u ? item[v] * scale : 0.f;
      store_item(out + offset, i, item);
    }
  });
}
