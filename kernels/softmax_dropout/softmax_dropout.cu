// Softmax + dropout on CUDA: softmax as softmax.cu (kernels/softmax/cuda_softmax_row.cuh), then
// each element is kept with probability 1 - P and scaled by 1 / (1 - P), or zeroed.
// The mask is the family's (softmax_dropout.hpp, kernels/common/philox.hpp): element
// i = row * cols + col takes 16 bits of Philox4x32-10 group i / 8 under the call's seed and
// offset (the rng tensor, read once per thread), kept iff
// philox::keep(bits, float(P)). A thread computes the Philox groups its VEC-element items fall
// in (VEC / 8 groups when rows and vectors start on group boundaries, else up to VEC / 8 + 1,
// including partial ones that neighbouring threads compute as well). When is the tunable
// KT_DRAW_EARLY: 0 draws each item's bits just before it is stored (the fewest instructions:
// the group's 4 words live briefly, no mask); 1 draws the whole row's bits right after its loads
// are issued and keeps one bit per element, so the Philox arithmetic runs while the loads are in
// flight (a warp waiting for memory has nothing else to do) at the price of packing and unpacking
// the mask. Left alone, the compiler sinks the arithmetic to where the bits are used; an empty
// asm statement that takes the mask words pins it before the reductions.
// Defines (search_spaces/softmax_dropout.cuda.json): KT_BLOCK_THREADS, KT_THREADS_PER_ROW,
// KT_VECTOR_BYTES, KT_BLOCKS_PER_SM (launch geometry only), KT_CLUSTER_SIZE, KT_ROW_STORAGE,
// KT_STREAMING, KT_FAST_EXP, KT_DRAW_EARLY; KT_T; KT_DIM_COLS.
#include "kernels/common/philox.hpp"
#include "kernels/softmax/cuda_softmax_row.cuh"
#include "kernels/softmax_dropout/softmax_dropout_constants.hpp"

#ifndef KT_DRAW_EARLY
#define KT_DRAW_EARLY 0
#endif

namespace {

using namespace kt::rows;

// keep iff bits * 2^-16 >= float(P), i.e. iff bits >= ceil(float(P) * 2^16) (exact: a float times
// a power of two): one integer compare instead of a conversion, a multiply and a float compare.
constexpr float kDropScaled = float(ktune::kSoftmaxDropoutP) * 65536.f;
constexpr unsigned kKeepThreshold = unsigned(kDropScaled) + (float(unsigned(kDropScaled)) < kDropScaled ? 1u : 0u);
static_assert(kKeepThreshold == 6554u, "p = 0.1 keeps 16-bit values from 6554 up (philox.hpp)");
constexpr float kKeptScale = float(1.0 / (1.0 - ktune::kSoftmaxDropoutP));

// The linear index of an item's first element, row * cols + col, is a multiple of kBaseAlign
// (a power of two <= 8): col is a multiple of kVec (slices are whole vectors), row * cols one of
// the largest power of two dividing cols. Its position in its Philox group is then one of
// 0, kBaseAlign, ... < 8, and the item's kVec elements span at most kSpan groups. A width known
// only at run time (KT_RUNTIME_DIMS) promises no alignment: kBaseAlign 1.
constexpr int kGroup = ktune::philox::kElementsPerGroup;
constexpr long long kColsPow2 = KT_RUNTIME_DIMS ? 1 : kMaxCols & -kMaxCols;
constexpr int kBaseAlign = kVec < kColsPow2 ? (kVec < kGroup ? kVec : kGroup) : (kColsPow2 < kGroup ? int(kColsPow2) : kGroup);
constexpr int kSpan = (kVec + kGroup - 1 - kBaseAlign) / kGroup + 1;
constexpr int kMaskWords = (kItems * kVec + 31) / 32;

// The 16-bit random values of elements base .. base + kVec - 1 (linear indices in the output).
__device__ __forceinline__ void dropout_bits(unsigned long long base, ktune::philox::U32x2 key, unsigned offset,
                                             unsigned int (&bits)[kVec]) {
  namespace philox = ktune::philox;
  const unsigned long long first_group = base / kGroup;
  philox::U32x4 groups[kSpan];
#pragma unroll
  for (int j = 0; j < kSpan; ++j)
    groups[j] = philox::philox4x32_10(philox::counter_of(first_group + j, offset), key);
  if constexpr (kBaseAlign == kGroup) {
    // base % 8 == 0: element v is element v % 8 of group v / 8.
#pragma unroll
    for (int v = 0; v < kVec; ++v) bits[v] = philox::element_of_group(groups[v / kGroup], v % kGroup);
  } else {
    // Element v is at flat position first + v of the groups, first = base % 8.
    const int first = int(base % kGroup);
#pragma unroll
    for (int v = 0; v < kVec; ++v) {
      unsigned int value = 0;
#pragma unroll
      for (int f = 0; f < kGroup; f += kBaseAlign)
        if (first == f) value = philox::element_of_group(groups[(f + v) / kGroup], (f + v) % kGroup);
      bits[v] = value;
    }
  }
}

// Bit (i * kVec + v) of `mask`: whether element v of item i of this thread's share of `row` is
// kept (KT_DRAW_EARLY=1).
__device__ __forceinline__ void draw_mask(long long row, ktune::philox::U32x2 key, unsigned offset,
                                          unsigned int (&mask)[kMaskWords]) {
#pragma unroll
  for (int w = 0; w < kMaskWords; ++w) mask[w] = 0;
  const unsigned long long row_base = (unsigned long long)row * (unsigned long long)row_cols();
#pragma unroll
  for (int i = 0; i < kItems; ++i) {
    if (!item_present(i)) continue;
    unsigned int bits[kVec];
    dropout_bits(row_base + (unsigned long long)item_column(i), key, offset, bits);
#pragma unroll
    for (int v = 0; v < kVec; ++v)
      if (bits[v] >= kKeepThreshold) mask[(i * kVec + v) / 32] |= 1u << ((i * kVec + v) % 32);
  }
#pragma unroll
  for (int w = 0; w < kMaskWords; ++w) KT_PIN_REGISTER(mask[w]);
}

}  // namespace

extern "C" __global__ void __launch_bounds__(KT_BLOCK_THREADS)
    softmax_dropout_kernel(const T* __restrict__ x, const int* __restrict__ rng, T* __restrict__ out, long long rows,
                           long long cols) {
  const ktune::philox::U32x2 key = ktune::philox::key_of(static_cast<unsigned>(rng[0]));
  const unsigned offset = static_cast<unsigned>(rng[1]);
  Reducer reduce;
  for_each_row(rows, cols, [&](long long row, bool active) {
    const long long start = (active ? row : 0) * row_cols();
    RowValues values;
#if KT_DRAW_EARLY
    unsigned int mask[kMaskWords];
    const float scale = kKeptScale * kt::softmax_row(x + start, values, reduce, [&] { draw_mask(row, key, offset, mask); });
#else
    const float scale = kKeptScale * kt::softmax_row(x + start, values, reduce);
#endif
    if (!active) return;
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      if (!item_present(i)) continue;
      float item[kVec];
      get_item(values, i, item);
#if KT_DRAW_EARLY
#pragma unroll
      for (int v = 0; v < kVec; ++v)
        item[v] = (mask[(i * kVec + v) / 32] >> ((i * kVec + v) % 32)) & 1u ? item[v] * scale : 0.f;
#else
      unsigned int bits[kVec];
      dropout_bits((unsigned long long)row * (unsigned long long)row_cols() + (unsigned long long)item_column(i), key, offset,
                   bits);
#pragma unroll
      for (int v = 0; v < kVec; ++v) item[v] = bits[v] >= kKeepThreshold ? item[v] * scale : 0.f;
#endif
      store_item(out + start, i, item);
    }
  });
}
