// merge_heads on CUDA and HIP (kernels/merge_heads/merge_heads.hpp has the problem): one group of
// THREADS_PER_HEAD lanes (a power of two <= 32) per head vector, in y's order, so consecutive
// groups write consecutive memory; each lane moves VEC elements at a time as a raw word. Where
// head_dim is not a multiple of VEC or a tensor is not aligned to a word (a caller's offset
// view), the same groups move single elements instead.
// Every dim is an argument (one binary serves every shape). Defines
// (search_spaces/merge_heads.cuda.json): KT_BLOCK_THREADS, KT_THREADS_PER_HEAD, KT_VECTOR_BYTES,
// KT_BLOCKS_PER_SM (0: one group per head vector, else a persistent grid; launch only); KT_T.
#include "kernels/common/cuda_head_groups.cuh"

using namespace kt::head_groups;

extern "C" __global__ void __launch_bounds__(KT_BLOCK_THREADS)
    merge_heads_kernel(const T* __restrict__ x, T* __restrict__ y, long long batch, long long heads, long long seq,
                       long long head_dim) {
  const long long vectors = batch * seq * heads;
  const int lane = threadIdx.x % kThreadsPerHead;
  const bool whole_words = head_dim % kVec == 0 && word_aligned(x) && word_aligned(y);
  for (long long vec = first_vector(); vec < vectors; vec += vector_step()) {
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
