// Paged decode attention on CUDA and HIP (kernels/paged_attention/paged_attention.hpp has the
// problem). Two paths (KT_PATH, the space's `path`): simt (paged_attention_simt.cuh: any NVIDIA
// or AMD GPU, fp32/fp16/bf16) and mma (paged_attention_mma.cuh: sm_80+ tensor cores,
// fp16/bf16).
//
// A block serves KT_HEADS_PER_BLOCK query heads of one kv head of one sequence (a part of the
// grouped-query group, so each key and value row it reads serves that many heads) over one of
// gridDim.y splits of the sequence's tokens. Each warp leaves its partial result (per head: the
// output row before normalisation, the maximum and the sum of its online softmax) in shared
// memory; the block merges them. With one split the block writes o and lse. With several it
// writes its merged partial result to the workspace; the last block of a head group to finish (a
// counter per head group, reset by that block) merges the splits and writes o and lse.
// head_dim and page_size are compile-time (KT_DIM_*); every other dim, the lengths and the table
// are read at run time.
#ifndef KT_STAGES
#define KT_STAGES 1  // the HIP space has no stages: loads straight into registers
#endif
#define KT_PATH_simt 0
#define KT_PATH_mma 1
#ifndef KT_PATH
#define KT_PATH KT_PATH_simt  // the HIP space has no path
#endif
#if KT_PATH == KT_PATH_simt
#include "kernels/paged_attention/paged_attention_simt.cuh"
#elif KT_PATH == KT_PATH_mma
#include "kernels/paged_attention/paged_attention_mma.cuh"
#else
#error "unknown KT_PATH"
#endif

extern "C" __global__ void __launch_bounds__(KT_WARPS * 32)
paged_attention_kernel(const KT_T* __restrict__ q, const KT_T* __restrict__ k_cache, const KT_T* __restrict__ v_cache,
                       const int* __restrict__ block_table, const int* __restrict__ seq_lens,
                       const float* __restrict__ scale_in, KT_T* __restrict__ o, float* __restrict__ lse,
                       long long batch, long long heads, long long kv_heads_dim, long long head_dim, long long page_size,
                       long long seq_kv, float* __restrict__ workspace) {
  using namespace kt::paged;
  (void)batch, (void)head_dim, (void)page_size;
  const long long kv_heads = kv_heads_dim == 0 ? heads : kv_heads_dim;
  const long long group = heads / kv_heads, max_pages = (seq_kv + PAGE - 1) / PAGE;
  const long long head0 = (long long)blockIdx.x * HEADS;  // the block's first query head, of all heads of the batch
  const long long b = head0 / heads, h0 = head0 % heads, kvh = h0 / group;
  const int splits = gridDim.y, split = blockIdx.y;

  // A length past the table's pages is clamped to them; a sequence of no tokens gets o = 0.
  const long long len = min((long long)seq_lens[b], max_pages * PAGE), chunk = (len + splits - 1) / splits;
  const long long first = min(len, split * chunk), last = min(len, first + chunk);
  const Span span{q + head0 * D, k_cache, v_cache, block_table + b * max_pages, kv_heads * D, kvh * D, first, last,
                  scale_in[0] * kLog2e};

  // The warps' slots, [WARPS][HEADS][D + 2], after what the path keeps in shared memory.
  extern __shared__ __align__(16) float shared[];
  float* const merge_area = shared + kMergeOffset;
  warp_partials(span, shared, merge_area);
  __syncthreads();
  // Each thread merges whole (head, element) columns over the warps; the maximum and sum of a
  // head come along with each of its elements.
  const bool several = splits > 1;
  float* partial = workspace + ((long long)blockIdx.x * splits + split) * HEADS * kStride;
  for (int i = threadIdx.x; i < HEADS * D; i += THREADS) {
    const int h = i / D, e = i % D;
    Column column;
    for (int w = 0; w < WARPS; ++w) column.absorb(merge_area + (w * HEADS + h) * kStride, e);
    if (several) {
      partial[h * kStride + e] = column.acc;
      if (e == 0) {
        partial[h * kStride + D] = column.max;
        partial[h * kStride + D + 1] = column.sum;
      }
    } else {
      column.store(o, lse, head0 + h, e);
    }
  }
  if (!several) return;

  // The last block of this head group to finish merges the splits.
  int* counters = reinterpret_cast<int*>(workspace + (long long)gridDim.x * splits * HEADS * kStride);
  __shared__ bool last_block;
  __threadfence();  // this block's partial is visible before its arrival is counted
  __syncthreads();
  if (threadIdx.x == 0) {
    last_block = atomicAdd(counters + blockIdx.x, 1) == splits - 1;
    if (last_block) counters[blockIdx.x] = 0;  // ready for the next launch
  }
  __syncthreads();
  if (!last_block) return;
  __threadfence();
  const float* partials = workspace + (long long)blockIdx.x * splits * HEADS * kStride;
  for (int i = threadIdx.x; i < HEADS * D; i += THREADS) {
    const int h = i / D, e = i % D;
    Column column;
    for (int sp = 0; sp < splits; ++sp)
      column.absorb(static_cast<const volatile float*>(partials + (sp * HEADS + h) * kStride), e);  // other blocks'
    column.store(o, lse, head0 + h, e);
  }
}
