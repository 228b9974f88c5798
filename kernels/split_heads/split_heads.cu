// split_heads on CUDA and HIP (kernels/split_heads/split_heads.hpp has the problem): one group of
// THREADS_PER_HEAD lanes (a power of two <= 32) per head vector of a token, in qkv's order, so
// consecutive groups read consecutive memory. Each lane owns VEC elements at j of the first half
// and the VEC at j + half, j = lane * VEC + step * THREADS_PER_HEAD * VEC: RoPE's pairs are then
// the lane's own and the rotation needs no shuffle. Values, and everything when rope = 0, are
// moved as raw words. Where half is not a multiple of VEC or a tensor is not aligned to a word
// (a caller's offset view), the same groups move single elements instead.
// Every dim is an argument (one binary serves every shape). Defines
// (search_spaces/split_heads.cuda.json): KT_BLOCK_THREADS, KT_THREADS_PER_HEAD, KT_VECTOR_BYTES,
// KT_BLOCKS_PER_SM (0: one group per head vector, else a persistent grid; launch only); KT_T.
#include "kernels/common/cuda_head_groups.cuh"

using namespace kt::head_groups;

extern "C" __global__ void __launch_bounds__(KT_BLOCK_THREADS)
    split_heads_kernel(const T* __restrict__ qkv, const T* __restrict__ cos_table, const T* __restrict__ sin_table,
                       T* __restrict__ q, T* __restrict__ k, T* __restrict__ v, long long batch, long long seq,
                       long long heads, long long kv_heads, long long head_dim, long long rope) {
  if (kv_heads == 0) kv_heads = heads;
  const long long slots = heads + 2 * kv_heads, half = head_dim / 2;
  const long long vectors = batch * seq * slots;
  const int lane = threadIdx.x % kThreadsPerHead;
  // half % VEC == 0 puts every head, half and table row on a word boundary of aligned tensors.
  const bool whole_words = half % kVec == 0 && word_aligned(qkv) && word_aligned(q) && word_aligned(k) &&
                           word_aligned(v) && (rope == 0 || (word_aligned(cos_table) && word_aligned(sin_table)));
  for (long long vec = first_vector(); vec < vectors; vec += vector_step()) {
    const long long token = quotient(vec, slots), slot = vec - token * slots;
    const long long b = quotient(token, seq), s = token - b * seq;
    T* dst;
    bool rotate = rope != 0;
    if (slot < heads) {
      dst = q + ((b * heads + slot) * seq + s) * head_dim;
    } else if (slot < heads + kv_heads) {
      dst = k + ((b * kv_heads + slot - heads) * seq + s) * head_dim;
    } else {
      dst = v + ((b * kv_heads + slot - heads - kv_heads) * seq + s) * head_dim;
      rotate = false;
    }
    const T* src = qkv + vec * head_dim;
    const T* cos_row = cos_table + s * half;
    const T* sin_row = sin_table + s * half;
    if (whole_words) {
      for (long long j = static_cast<long long>(lane) * kVec; j < half; j += kThreadsPerHead * kVec) {
        if (rotate) {
          float lo[kVec], hi[kVec], c[kVec], n[kVec], out_lo[kVec], out_hi[kVec];
          kt::load_floats<T, kVec>(src + j, lo);
          kt::load_floats<T, kVec>(src + half + j, hi);
          kt::load_floats<T, kVec>(cos_row + j, c);
          kt::load_floats<T, kVec>(sin_row + j, n);
#pragma unroll
          for (int e = 0; e < kVec; ++e) {
            out_lo[e] = lo[e] * c[e] - hi[e] * n[e];
            out_hi[e] = hi[e] * c[e] + lo[e] * n[e];
          }
          kt::store_floats<T, kVec>(dst + j, out_lo);
          kt::store_floats<T, kVec>(dst + half + j, out_hi);
        } else {
          const Word lo = *reinterpret_cast<const Word*>(src + j), hi = *reinterpret_cast<const Word*>(src + half + j);
          *reinterpret_cast<Word*>(dst + j) = lo;
          *reinterpret_cast<Word*>(dst + half + j) = hi;
        }
      }
    } else {
      for (long long i = lane; i < half; i += kThreadsPerHead) {
        if (rotate) {
          const float a = kt::to_float(src[i]), h = kt::to_float(src[half + i]);
          const float c = kt::to_float(cos_row[i]), n = kt::to_float(sin_row[i]);
          dst[i] = kt::from_float<T>(a * c - h * n);
          dst[half + i] = kt::from_float<T>(h * c + a * n);
        } else {
          dst[i] = src[i];
          dst[half + i] = src[half + i];
        }
      }
    }
  }
}
