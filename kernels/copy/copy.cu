// Copy on CUDA: out[i] = x[i], moved as raw VECTOR_BYTES-wide words (no conversion), ITEMS words
// per thread per pass with all loads issued before the stores, in a grid-stride loop (one pass
// when the grid covers the array, a persistent grid otherwise). The tail that does not fill a
// whole word is copied element by element by the first threads.
// Defines (search_spaces/copy.cuda.json): KT_BLOCK_THREADS, KT_VECTOR_BYTES, KT_ITEMS,
// KT_BLOCKS_PER_SM (launch geometry only), KT_STREAMING; KT_T.
#include "kernels/common/cuda_common.cuh"

#ifndef KT_STREAMING
#define KT_STREAMING 0
#endif

namespace {

using T = KT_T;
using Word = typename kt::Bits<KT_VECTOR_BYTES>::type;
constexpr int kVec = KT_VECTOR_BYTES / int(sizeof(T));
constexpr int kItems = KT_ITEMS;
constexpr int kBlockThreads = KT_BLOCK_THREADS;

__device__ __forceinline__ Word load_word(const Word* p) {
#if KT_STREAMING
  return kt::load_streaming(p);
#else
  return *p;
#endif
}

__device__ __forceinline__ void store_word(Word* p, Word w) {
#if KT_STREAMING
  kt::store_streaming(p, w);
#else
  *p = w;
#endif
}

}  // namespace

extern "C" __global__ void __launch_bounds__(KT_BLOCK_THREADS)
    copy_kernel(const T* __restrict__ x, T* __restrict__ out, long long n) {
  const long long words = n / kVec;
  const Word* src = reinterpret_cast<const Word*>(x);
  Word* dst = reinterpret_cast<Word*>(out);
  const long long per_pass = (long long)gridDim.x * kBlockThreads * kItems;
  for (long long base = (long long)blockIdx.x * kBlockThreads * kItems + threadIdx.x; base < words;
       base += per_pass) {
    Word w[kItems];
#pragma unroll
    for (int item = 0; item < kItems; ++item) {
      const long long i = base + (long long)item * kBlockThreads;
      if (i < words) w[item] = load_word(src + i);
    }
#pragma unroll
    for (int item = 0; item < kItems; ++item) {
      const long long i = base + (long long)item * kBlockThreads;
      if (i < words) store_word(dst + i, w[item]);
    }
  }
  const long long tail = words * kVec + (long long)blockIdx.x * kBlockThreads + threadIdx.x;
  if (tail < n) out[tail] = x[tail];
}
