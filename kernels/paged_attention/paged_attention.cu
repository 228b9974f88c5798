// Paged decode attention on CUDA and HIP (kernels/paged_attention/paged_attention.hpp has the
// problem). Portable SIMT: any NVIDIA or AMD GPU, fp32/fp16/bf16.
//
// A block serves KT_HEADS_PER_BLOCK query heads of one kv head of one sequence (a part of the
// grouped-query group, so each key and value row it reads serves that many heads) over one of
// gridDim.y splits of the sequence's tokens. Its threads form groups of KT_LANES_PER_TOKEN lanes;
// a group takes one cached token at a time (its page from the block table), each lane a slice of
// head_dim / KT_LANES_PER_TOKEN elements of the key and value rows, so a group reads whole rows
// in wide loads; KT_UNROLL tokens per group are loaded before they are used (their pages looked
// up a step ahead). Each group keeps an online softmax per head (maximum, sum, output slice in
// registers), updated once per step of UNROLL tokens; the groups of a warp are combined with
// shuffles, the warps through shared memory. With KT_STAGES > 1 (CUDA sm_80+) the loads go by
// cp.async into a ring of shared-memory stages, STAGES - 1 steps ahead of the step computed.
//
// With one split the block writes o and lse. With several it writes its partial result to the
// workspace; the last block of a head group to finish (a counter per head group, reset by that
// block) merges the splits and writes o and lse. head_dim and page_size are compile-time
// (KT_DIM_*); every other dim, the lengths and the table are read at run time.
#include "kernels/common/cuda_common.cuh"
#ifndef KT_STAGES
#define KT_STAGES 1  // the HIP space has no stages: loads straight into registers
#endif
#if KT_STAGES > 1
#include "kernels/common/cuda_mma.cuh"  // cp.async (sm_80+, CUDA only)
#endif

namespace kt::paged {

using T = KT_T;
constexpr int D = KT_DIM_HEAD_DIM, PAGE = KT_DIM_PAGE_SIZE;
constexpr int HEADS = KT_HEADS_PER_BLOCK, LANES = KT_LANES_PER_TOKEN, WARPS = KT_WARPS, UNROLL = KT_UNROLL;
constexpr int SLICE = D / LANES;                                    // elements of a row per lane
constexpr int VEC = SLICE * int(sizeof(T)) >= 16 ? 16 / int(sizeof(T)) : SLICE;  // elements per load
constexpr int GROUPS_PER_WARP = 32 / LANES, GROUPS = WARPS * GROUPS_PER_WARP;
constexpr float kLog2e = 1.4426950408889634f, kLn2 = 0.69314718055994531f;

// -inf, the maximum of no scores (NVRTC has no <cmath> INFINITY).
__device__ __forceinline__ float minus_infinity() { return __int_as_float(0xff800000); }
static_assert(D % LANES == 0 && SLICE % VEC == 0, "head_dim must split into whole loads over the lanes of a token");

// The online softmax of HEADS query heads over the tokens one group (or, merged, a block) saw.
struct State {
  float max[HEADS], sum[HEADS], acc[HEADS][SLICE];

  __device__ __forceinline__ void clear() {
#pragma unroll
    for (int h = 0; h < HEADS; ++h) {
      max[h] = minus_infinity();
      sum[h] = 0.0f;
#pragma unroll
      for (int e = 0; e < SLICE; ++e) acc[h][e] = 0.0f;
    }
  }
  // Adds another state's head h (its maximum m, sum s, slice a) rescaled to the common maximum.
  __device__ __forceinline__ void absorb(int h, float m, float s, const float (&a)[SLICE]) {
    const float common = fmaxf(max[h], m);
    if (common == minus_infinity()) return;  // neither has seen a token
    const float mine = exp2f(max[h] - common), theirs = exp2f(m - common);
    max[h] = common;
    sum[h] = sum[h] * mine + s * theirs;
#pragma unroll
    for (int e = 0; e < SLICE; ++e) acc[h][e] = acc[h][e] * mine + a[e] * theirs;
  }
};

// One output element merged over several partial results (the warps of a block, or the splits of
// a sequence), each a slot of [D elements, maximum, sum]; P is volatile for slots other blocks
// wrote. store() writes the element and, for element 0, the head's lse.
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

__device__ __forceinline__ void load_slice(const T* row, float (&out)[SLICE]) {
#pragma unroll
  for (int e = 0; e < SLICE; e += VEC) {
    float part[VEC];
    load_floats<T, VEC>(row + e, part);
#pragma unroll
    for (int i = 0; i < VEC; ++i) out[e + i] = part[i];
  }
}

}  // namespace kt::paged

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
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int part = lane % LANES, token_group = warp * GROUPS_PER_WARP + lane / LANES;

  // A length past the table's pages is clamped to them; a sequence of no tokens gets o = 0.
  const long long len = min((long long)seq_lens[b], max_pages * PAGE), chunk = (len + splits - 1) / splits;
  const long long first = min(len, split * chunk), last = min(len, first + chunk);

  // This lane's slice of each head's query, scaled so that exp2 gives the softmax.
  const float scale_log2 = scale_in[0] * kLog2e;
  float query[HEADS][SLICE];
#pragma unroll
  for (int h = 0; h < HEADS; ++h) {
    load_slice(q + (head0 + h) * D + part * SLICE, query[h]);
#pragma unroll
    for (int e = 0; e < SLICE; ++e) query[h][e] *= scale_log2;
  }

  State state;
  state.clear();
  const int* table = block_table + b * max_pages;
  const long long row_stride = kv_heads * D;  // elements from one token's row to the next
  // The page of each of this group's UNROLL tokens of a step, looked up one step ahead: the table
  // read heads each token's chain of dependent loads, so it is issued while the step before it
  // computes.
  int page[UNROLL];
  const auto look_up = [&](long long step) {
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      const long long t = step + (long long)u * GROUPS + token_group;
      page[u] = t < last ? table[t / PAGE] : 0;
    }
  };
  constexpr long long kStep = (long long)GROUPS * UNROLL;  // tokens of the block's step
  float keys[UNROLL][SLICE], values[UNROLL][SLICE];
  bool present[UNROLL];
  // One online-softmax update per head for the step's UNROLL tokens (in keys, values, present):
  // their scores first, then one rescale of the state to the step's maximum (not one per token).
  const auto absorb_step = [&]() {
#pragma unroll
    for (int h = 0; h < HEADS; ++h) {
      float score[UNROLL];
      float step_max = state.max[h];
#pragma unroll
      for (int u = 0; u < UNROLL; ++u) {
        float dot = 0.0f;
#pragma unroll
        for (int e = 0; e < SLICE; ++e) dot = fmaf(query[h][e], keys[u][e], dot);
        dot = kt::group_sum<LANES>(dot);
        score[u] = present[u] ? dot : minus_infinity();
        step_max = fmaxf(step_max, score[u]);
      }
      if (step_max == minus_infinity()) continue;  // no token seen yet (exp2 of -inf - -inf is NaN)
      const float rescale = exp2f(state.max[h] - step_max);  // 0 for the first tokens seen
      state.max[h] = step_max;
      state.sum[h] *= rescale;
#pragma unroll
      for (int e = 0; e < SLICE; ++e) state.acc[h][e] *= rescale;
#pragma unroll
      for (int u = 0; u < UNROLL; ++u) {
        const float p = exp2f(score[u] - step_max);  // 0 for an absent token
        state.sum[h] += p;
#pragma unroll
        for (int e = 0; e < SLICE; ++e) state.acc[h][e] = fmaf(p, values[u][e], state.acc[h][e]);
      }
    }
  };
  const auto cache_row = [&](long long t, int u) {
    return ((long long)page[u] * PAGE + t % PAGE) * row_stride + kvh * D + part * SLICE;
  };
  extern __shared__ float shared[];
  look_up(first);
  // Every lane of a block takes the same number of steps, and every lane of a warp the same
  // shuffles: a token past the range is taken as zeros and leaves the state as it is.
#if KT_STAGES > 1
  // STAGES - 1 steps of keys and values in flight by cp.async into a ring of shared stages, so
  // that the bytes in flight do not depend on registers nor wait for the step being computed.
  // Each thread copies and later reads only its own slices (no barrier): per stage, token and
  // K or V, its 16-byte (or narrower) chunks lie thread after thread, so reads are conflict-free.
  T* const stages = reinterpret_cast<T*>(shared);
  const auto staged_chunk = [&](int stage, int u, int kv, int c) {
    return stages + ((((stage * UNROLL + u) * 2 + kv) * (SLICE / VEC) + c) * (WARPS * 32) + threadIdx.x) * VEC;
  };
  const auto issue = [&](long long step, int stage) {  // its tokens past the range: no copy, never read
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      const long long t = step + (long long)u * GROUPS + token_group;
      if (t >= last) continue;
      const long long row = cache_row(t, u);
#pragma unroll
      for (int c = 0; c < SLICE / VEC; ++c) {
        kt::mma::copy_async<VEC * int(sizeof(T))>(staged_chunk(stage, u, 0, c), k_cache + row + c * VEC);
        kt::mma::copy_async<VEC * int(sizeof(T))>(staged_chunk(stage, u, 1, c), v_cache + row + c * VEC);
      }
    }
  };
#pragma unroll
  for (int s = 0; s < KT_STAGES - 1; ++s) {
    issue(first + s * kStep, s);
    look_up(first + (s + 1) * kStep);
    kt::mma::commit_copies();
  }
  int stage = 0;
  for (long long step = first; step < last; step += kStep) {
    // The stage refilled now is the one read a step ago: this thread's reads of it are done.
    issue(step + (KT_STAGES - 1) * kStep, (stage + KT_STAGES - 1) % KT_STAGES);
    look_up(step + KT_STAGES * kStep);
    kt::mma::commit_copies();
    kt::mma::wait_copies<KT_STAGES - 1>();
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      present[u] = step + (long long)u * GROUPS + token_group < last;
#pragma unroll
      for (int c = 0; c < SLICE / VEC; ++c) {
        float part_k[VEC], part_v[VEC];
        if (present[u]) {
          kt::load_floats<T, VEC>(staged_chunk(stage, u, 0, c), part_k);
          kt::load_floats<T, VEC>(staged_chunk(stage, u, 1, c), part_v);
        }
#pragma unroll
        for (int i = 0; i < VEC; ++i) {
          keys[u][c * VEC + i] = present[u] ? part_k[i] : 0.0f;
          values[u][c * VEC + i] = present[u] ? part_v[i] : 0.0f;
        }
      }
    }
    stage = stage + 1 == KT_STAGES ? 0 : stage + 1;
    absorb_step();
  }
  kt::mma::wait_copies<0>();  // (only empty groups are left: no copy is issued past the range)
  float* const merge_area = shared + KT_STAGES * UNROLL * 2 * SLICE * (WARPS * 32) * int(sizeof(T)) / 4;
#else
  for (long long step = first; step < last; step += kStep) {
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {  // every load of the UNROLL tokens in flight first
      const long long t = step + (long long)u * GROUPS + token_group;
      present[u] = t < last;
      if (present[u]) {
        const long long row = cache_row(t, u);
        load_slice(k_cache + row, keys[u]);
        load_slice(v_cache + row, values[u]);
      } else {
#pragma unroll
        for (int e = 0; e < SLICE; ++e) keys[u][e] = values[u][e] = 0.0f;
      }
    }
    look_up(step + kStep);
    absorb_step();
  }
  float* const merge_area = shared;
#endif

  // The groups of a warp: lanes holding the same slice in other groups, by shuffles.
#pragma unroll
  for (int offset = LANES; offset < 32; offset *= 2) {
#pragma unroll
    for (int h = 0; h < HEADS; ++h) {
      float other[SLICE];
#pragma unroll
      for (int e = 0; e < SLICE; ++e) other[e] = kt::shfl_xor(state.acc[h][e], offset);
      const float m = kt::shfl_xor(state.max[h], offset), s = kt::shfl_xor(state.sum[h], offset);
      state.absorb(h, m, s, other);
    }
  }

  // The warps, through shared memory: [WARPS][HEADS][D + 2] (the slice, then maximum and sum),
  // after the stages.
  constexpr int kStride = D + 2;
  if (lane < LANES) {
#pragma unroll
    for (int h = 0; h < HEADS; ++h) {
      float* slot = merge_area + (warp * HEADS + h) * kStride;
#pragma unroll
      for (int e = 0; e < SLICE; ++e) slot[part * SLICE + e] = state.acc[h][e];
      if (part == 0) {
        slot[D] = state.max[h];
        slot[D + 1] = state.sum[h];
      }
    }
  }
  __syncthreads();
  // Each thread merges whole (head, element) columns over the warps; the maximum and sum of a
  // head come along with each of its elements.
  const bool several = splits > 1;
  float* partial = workspace + ((long long)blockIdx.x * splits + split) * HEADS * kStride;
  for (int i = threadIdx.x; i < HEADS * D; i += WARPS * 32) {
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
  for (int i = threadIdx.x; i < HEADS * D; i += WARPS * 32) {
    const int h = i / D, e = i % D;
    Column column;
    for (int sp = 0; sp < splits; ++sp)
      column.absorb(static_cast<const volatile float*>(partials + (sp * HEADS + h) * kStride), e);  // other blocks'
    column.store(o, lse, head0 + h, e);
  }
}
