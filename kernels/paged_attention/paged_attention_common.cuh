// What both paths of paged decode attention share (kernels/paged_attention/paged_attention.cu):
// the block's span of one sequence, and the merge of partial softmax results (the warps of a
// block, then the splits of a sequence) from slots of [D elements, maximum, sum].
#pragma once

#include "kernels/common/cuda_common.cuh"

namespace kt::paged {

using T = KT_T;
constexpr int D = KT_DIM_HEAD_DIM, PAGE = KT_DIM_PAGE_SIZE;
constexpr int HEADS = KT_HEADS_PER_BLOCK, WARPS = KT_WARPS, THREADS = KT_WARPS * 32;
constexpr int kStride = D + 2;  // floats of a slot: the D elements, then the maximum and the sum
constexpr float kLog2e = 1.4426950408889634f, kLn2 = 0.69314718055994531f;

// -inf, the maximum of no scores (NVRTC has no <cmath> INFINITY).
__device__ __forceinline__ float minus_infinity() { return __int_as_float(0xff800000); }

// The tokens [first, last) of one sequence a block attends to, for the HEADS query heads from q
// on, over the rows of one kv head in the paged cache.
struct Span {
  const T* q;              // the first of the block's query heads, D elements each
  const T* k_cache;
  const T* v_cache;
  const int* table;        // the sequence's row of the block table
  long long row_stride;    // elements from one token's row of the cache to the next (kv_heads * D)
  long long head_offset;   // the kv head's first element in a token's row
  long long first, last;
  float scale_log2;        // the softmax scale times log2(e): exp2 of scaled scores gives the softmax

  // The first element of token t's row, its page from the table (`page` = table[t / PAGE]).
  __device__ __forceinline__ long long row(long long t, int page) const {
    return ((long long)page * PAGE + t % PAGE) * row_stride + head_offset;
  }
};

// One output element merged over several partial results, each a slot; P is volatile for slots
// other blocks wrote. store() writes the element and, for element 0, the head's lse. Maxima are
// in the log2 units of scaled scores.
struct Column {
  float max, sum, acc;

  __device__ __forceinline__ Column() : max(minus_infinity()), sum(0.0f), acc(0.0f) {}
  template <typename P>
  __device__ __forceinline__ void absorb(const P* slot, int e) {
    const float theirs_max = slot[D];
    const float common = fmaxf(max, theirs_max);
    if (common == minus_infinity()) return;  // neither has seen a token (a split past the end)
    const float mine = exp2f(max - common), theirs = exp2f(theirs_max - common);
    sum = sum * mine + slot[D + 1] * theirs;
    acc = acc * mine + slot[e] * theirs;
    max = common;
  }
  __device__ __forceinline__ void store(T* o, float* lse, long long head, int e) const {
    o[head * D + e] = kt::from_float<T>(sum > 0.0f ? acc / sum : 0.0f);  // no tokens: o = 0
    if (e == 0) lse[head] = sum > 0.0f ? (max + log2f(sum)) * kLn2 : minus_infinity();
  }
};

}  // namespace kt::paged
