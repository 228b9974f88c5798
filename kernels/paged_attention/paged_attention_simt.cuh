// Paged decode attention, the SIMT path (any NVIDIA or AMD GPU, fp32/fp16/bf16): each warp's
// partial result over its share of a block's span, written to its merge slots.
//
// The block's threads form groups of KT_LANES_PER_TOKEN lanes; a group takes one cached token at
// a time (its page from the block table), each lane a slice of head_dim / KT_LANES_PER_TOKEN
// elements of the key and value rows, so a group reads whole rows in wide loads; KT_UNROLL
// tokens per group are loaded before they are used (their pages looked up a step ahead). Each
// group keeps an online softmax per head (maximum, sum, output slice in registers), updated once
// per step of UNROLL tokens; the groups of a warp are combined with shuffles. With KT_STAGES > 1
// (CUDA sm_80+) the loads go by cp.async into a ring of shared-memory stages, STAGES - 1 steps
// ahead of the step computed.
#pragma once

#include "kernels/paged_attention/paged_attention_common.cuh"
#if KT_STAGES > 1
#include "kernels/common/cuda_mma.cuh"  // cp.async (sm_80+, CUDA only)
#endif

namespace kt::paged {

constexpr int LANES = KT_LANES_PER_TOKEN, UNROLL = KT_UNROLL, STAGES = KT_STAGES;
constexpr int SLICE = D / LANES;                                    // elements of a row per lane
constexpr int VEC = SLICE * int(sizeof(T)) >= 16 ? 16 / int(sizeof(T)) : SLICE;  // elements per load
constexpr int GROUPS_PER_WARP = 32 / LANES, GROUPS = WARPS * GROUPS_PER_WARP;
constexpr long long kStep = (long long)GROUPS * UNROLL;  // tokens of the block's step
static_assert(D % LANES == 0 && SLICE % VEC == 0, "head_dim must split into whole loads over the lanes of a token");
// The stages come first in shared memory, the warps' merge slots after them.
constexpr int kMergeOffset = STAGES > 1 ? STAGES * UNROLL * 2 * SLICE * THREADS * int(sizeof(T)) / 4 : 0;

// The online softmax of HEADS query heads over the tokens one group (or, merged, a warp) saw.
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

__device__ __forceinline__ void load_slice(const T* row, float (&out)[SLICE]) {
#pragma unroll
  for (int e = 0; e < SLICE; e += VEC) {
    float part[VEC];
    kt::load_floats<T, VEC>(row + e, part);
#pragma unroll
    for (int i = 0; i < VEC; ++i) out[e + i] = part[i];
  }
}

__device__ __forceinline__ void warp_partials(const Span& span, float* shared, float* merge_area) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int part = lane % LANES, token_group = warp * GROUPS_PER_WARP + lane / LANES;
  const long long first = span.first, last = span.last;

  // This lane's slice of each head's query, scaled so that exp2 gives the softmax.
  float query[HEADS][SLICE];
#pragma unroll
  for (int h = 0; h < HEADS; ++h) {
    load_slice(span.q + h * D + part * SLICE, query[h]);
#pragma unroll
    for (int e = 0; e < SLICE; ++e) query[h][e] *= span.scale_log2;
  }

  State state;
  state.clear();
  // The page of each of this group's UNROLL tokens of a step, looked up one step ahead: the table
  // read heads each token's chain of dependent loads, so it is issued while the step before it
  // computes.
  int page[UNROLL];
  const auto look_up = [&](long long step) {
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      const long long t = step + (long long)u * GROUPS + token_group;
      page[u] = t < last ? span.table[t / PAGE] : 0;
    }
  };
  const auto cache_row = [&](long long t, int u) { return span.row(t, page[u]) + part * SLICE; };
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
    return stages + ((((stage * UNROLL + u) * 2 + kv) * (SLICE / VEC) + c) * THREADS + threadIdx.x) * VEC;
  };
  const auto issue = [&](long long step, int stage) {  // its tokens past the range: no copy, never read
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      const long long t = step + (long long)u * GROUPS + token_group;
      if (t >= last) continue;
      const long long row = cache_row(t, u);
#pragma unroll
      for (int c = 0; c < SLICE / VEC; ++c) {
        kt::mma::copy_async<VEC * int(sizeof(T))>(staged_chunk(stage, u, 0, c), span.k_cache + row + c * VEC);
        kt::mma::copy_async<VEC * int(sizeof(T))>(staged_chunk(stage, u, 1, c), span.v_cache + row + c * VEC);
      }
    }
  };
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    issue(first + s * kStep, s);
    look_up(first + (s + 1) * kStep);
    kt::mma::commit_copies();
  }
  int stage = 0;
  for (long long step = first; step < last; step += kStep) {
    // The stage refilled now is the one read a step ago: this thread's reads of it are done.
    issue(step + (STAGES - 1) * kStep, (stage + STAGES - 1) % STAGES);
    look_up(step + STAGES * kStep);
    kt::mma::commit_copies();
    kt::mma::wait_copies<STAGES - 1>();
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
    stage = stage + 1 == STAGES ? 0 : stage + 1;
    absorb_step();
  }
  kt::mma::wait_copies<0>();  // (only empty groups are left: no copy is issued past the range)
#else
  (void)shared;
  for (long long step = first; step < last; step += kStep) {
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {  // every load of the UNROLL tokens in flight first
      const long long t = step + (long long)u * GROUPS + token_group;
      present[u] = t < last;
      if (present[u]) {
        const long long row = cache_row(t, u);
        load_slice(span.k_cache + row, keys[u]);
        load_slice(span.v_cache + row, values[u]);
      } else {
#pragma unroll
        for (int e = 0; e < SLICE; ++e) keys[u][e] = values[u][e] = 0.0f;
      }
    }
    look_up(step + kStep);
    absorb_step();
  }
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
}

}  // namespace kt::paged
