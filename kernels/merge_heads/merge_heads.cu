// merge_heads on CUDA and HIP (kernels/merge_heads/merge_heads.hpp has the problem): one group of
// THREADS_PER_HEAD lanes (a power of two <= 32) per head vector, in y's order, so consecutive
// groups write consecutive memory; each lane moves VEC elements at a time as a raw word. Where
// head_dim is not a multiple of VEC or a tensor is not aligned to a word (a caller's offset
// view), the same groups move single elements instead.
// Every dim is an argument (one binary serves every shape). Defines
// (search_spaces/merge_heads.cuda.json): KT_BLOCK_THREADS, KT_THREADS_PER_HEAD, KT_VECTOR_BYTES,
// KT_BLOCKS_PER_SM (0: one group per head vector, else a persistent grid; launch only); KT_T.
#include "kernels/common/cuda_common.cuh"

namespace {

using T = KT_T;
constexpr int kThreadsPerHead = KT_THREADS_PER_HEAD;
constexpr int kGroupsPerBlock = KT_BLOCK_THREADS / KT_THREADS_PER_HEAD;
constexpr int kVec = KT_VECTOR_BYTES / int(sizeof(T)) > 0 ? KT_VECTOR_BYTES / int(sizeof(T)) : 1;
using Word = typename kt::Bits<kVec * int(sizeof(T))>::type;

static_assert(kThreadsPerHead >= 1 && kThreadsPerHead <= 32 && (kThreadsPerHead & (kThreadsPerHead - 1)) == 0,
              "threads_per_head must be a power of two <= 32");
static_assert(KT_BLOCK_THREADS % kThreadsPerHead == 0, "block_threads must hold whole groups");

// n / d of non-negative values, in 32 bits where both fit (a 64-bit division is a long software
// routine, and there are two per head vector).
__device__ __forceinline__ long long quotient(long long n, long long d) {
  return n < (1LL << 32) && d < (1LL << 32) ? static_cast<long long>(static_cast<unsigned>(n) / static_cast<unsigned>(d))
                                            : n / d;
}

}  // namespace

extern "C" __global__ void __launch_bounds__(KT_BLOCK_THREADS)
    merge_heads_kernel(const T* __restrict__ x, T* __restrict__ y, long long batch, long long heads, long long seq,
                       long long head_dim) {
  const long long vectors = batch * seq * heads;
  const int lane = threadIdx.x % kThreadsPerHead;
  const bool whole_words = head_dim % kVec == 0 && reinterpret_cast<unsigned long long>(x) % sizeof(Word) == 0 &&
                           reinterpret_cast<unsigned long long>(y) % sizeof(Word) == 0;
  for (long long vec = static_cast<long long>(blockIdx.x) * kGroupsPerBlock + threadIdx.x / kThreadsPerHead;
       vec < vectors; vec += static_cast<long long>(gridDim.x) * kGroupsPerBlock) {
    const long long token = quotient(vec, heads), h = vec - token * heads;  // y's row and head
    const long long b = quotient(token, seq), s = token - b * seq;
    const T* src = x + ((b * heads + h) * seq + s) * head_dim;
    T* dst = y + vec * head_dim;
    if (whole_words) {
      for (long long j = static_cast<long long>(lane) * kVec; j < head_dim; j += kThreadsPerHead * kVec)
        *reinterpret_cast<Word*>(dst + j) = *reinterpret_cast<const Word*>(src + j);
    } else {
      for (long long j = lane; j < head_dim; j += kThreadsPerHead) dst[j] = src[j];
    }
  }
}
