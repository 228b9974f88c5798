// Flash attention's backward, the portable SIMT path (kernels/flash_attention_backward/
// flash_attention_backward.cu lists the paths): any NVIDIA or AMD GPU, fp32/fp16/bf16, every
// product on the FMA units in fp32.
//
// The two kinds of blocks:
//   - a block of KT_BLOCK_ROWS keys of one kv head (blockIdx.y < kv_heads) holds their k, v rows
//     and its dk, dv accumulators in registers, and streams every query row of the head group
//     that sees them through shared memory KT_STREAM_ROWS at a time (q, dout as fp32, with each
//     row's lse and D = dout · o), adding P·dout into dv and dS·q into dk;
//   - a block of KT_BLOCK_ROWS query rows of one head holds their q, dout and dq, with each row's
//     lse and D, and streams the keys they see (k, v as fp32) through shared memory, adding dS·k
//     into dq.
// A row (a key in the first kind, a query in the second) belongs to a group of
// KT_THREADS_PER_ROW consecutive lanes, each owning a contiguous slice of head_dim /
// KT_THREADS_PER_ROW elements; the group's lanes add up their partial dot products with
// butterfly shuffles, so each lane holds the whole score and probability. Rows and keys past the
// lengths are zeros (lse +inf) and masked; the causal mask is the forward's (bottom-right).
// head_dim and causal are compile-time (KT_DIM_*); the lengths are read at run time.
#pragma once

#include "kernels/flash_attention_backward/flash_attention_backward_common.cuh"

namespace kt::backward {

constexpr int GROUP = KT_THREADS_PER_ROW;
constexpr int THREADS = ROWS * GROUP, SLICE = D / GROUP;
static_assert(D % (2 * GROUP) == 0 && (GROUP & (GROUP - 1)) == 0 && GROUP <= 32 && THREADS <= 1024,
              "whole pairs of elements per lane, a power-of-two group inside one warp");
// The loaders' loops (r = row; r < STREAM; r += ROWS) shuffle: every lane of a warp takes as many
// steps when the warp's rows (32 / GROUP of them) never straddle STREAM or ROWS.
static_assert(STREAM % (32 / GROUP) == 0 && ROWS % (32 / GROUP) == 0, "warp-uniform loader loops");

// This lane's slice of row `row` of a [rows, D] matrix as floats (zeros past `rows`).
__device__ __forceinline__ void load_slice(const T* matrix, long long row, long long rows, int lane, float (&out)[SLICE]) {
#pragma unroll
  for (int e = 0; e < SLICE; e += 2) {
    float pair[2] = {0.0f, 0.0f};
    if (row < rows) load_floats<T, 2>(matrix + row * D + lane * SLICE + e, pair);
    out[e] = pair[0];
    out[e + 1] = pair[1];
  }
}

__device__ __forceinline__ void store_slice(T* matrix, long long row, int lane, const float (&in)[SLICE], float scale) {
#pragma unroll
  for (int e = 0; e < SLICE; e += 2) {
    const float pair[2] = {in[e] * scale, in[e + 1] * scale};
    store_floats<T, 2>(matrix + row * D + lane * SLICE + e, pair);
  }
}

// The group's dot product of two slices, on every lane of the group.
__device__ __forceinline__ float group_dot(const float (&a)[SLICE], const float* b) {
  float sum = 0.0f;
#pragma unroll
  for (int e = 0; e < SLICE; ++e) sum = fmaf(a[e], b[e], sum);
  return group_sum<GROUP>(sum);
}

}  // namespace kt::backward

extern "C" __global__ void __launch_bounds__(kt::backward::THREADS)
flash_attention_backward_kernel(const KT_T* __restrict__ q, const KT_T* __restrict__ k, const KT_T* __restrict__ v,
                                const KT_T* __restrict__ o, const KT_T* __restrict__ dout,
                                const float* __restrict__ lse, const float* __restrict__ scale_in,
                                KT_T* __restrict__ dq, KT_T* __restrict__ dk, KT_T* __restrict__ dv, long long,
                                long long heads, long long kv_heads_dim, long long seq_q, long long seq_kv, long long,
                                long long, float*) {  // the workspace only the mma path's atomic dq uses
  using namespace kt::backward;
  extern __shared__ float shared[];  // [STREAM][D] twice, then [STREAM] lse and D
  float* tile_a = shared;
  float* tile_b = tile_a + STREAM * D;
  float* row_lse = tile_b + STREAM * D;
  float* row_delta = row_lse + STREAM;

  const long long kv_heads = kv_heads_dim == 0 ? heads : kv_heads_dim, group = heads / kv_heads;
  const Lengths len{seq_q, seq_kv};
  const long long key_blocks = (seq_kv + ROWS - 1) / ROWS;
  const long long batch = blockIdx.z, head = blockIdx.y;
  const int lane = threadIdx.x % GROUP, row = threadIdx.x / GROUP;
  const float scale = *scale_in, scale_log2 = scale * kLog2e;

  if ((long long)blockIdx.x < key_blocks) {
    // dk, dv of keys [j0, j0 + ROWS) of kv head `head`.
    if (head >= kv_heads) return;
    const long long j0 = (long long)blockIdx.x * ROWS, j = j0 + row;
    const long long kv_base = (batch * kv_heads + head) * seq_kv;
    float key[SLICE], value[SLICE], grad_k[SLICE], grad_v[SLICE];
    load_slice(k + kv_base * D, j, seq_kv, lane, key);
    load_slice(v + kv_base * D, j, seq_kv, lane, value);
#pragma unroll
    for (int e = 0; e < SLICE; ++e) grad_k[e] = grad_v[e] = 0.0f;
    // The first query row that sees key j0 (bottom-right causal).
    const long long first = len.first_query(j0);
    for (long long h = head * group; h < (head + 1) * group; ++h) {
      const long long q_base = (batch * heads + h) * seq_q;
      for (long long i0 = first; i0 < seq_q; i0 += STREAM) {
        __syncthreads();  // every thread is done with the previous tiles
        // Each group of lanes loads whole rows: q into tile_a, dout into tile_b, lse and D = dout · o.
        for (int r = row; r < STREAM; r += ROWS) {
          const long long i = i0 + r;
          // One slice live at a time beside the accumulators: q stored, then dout, then o taken
          // pair by pair into D (fewer registers than holding all three).
          float slice[SLICE];
          load_slice(q + q_base * D, i, seq_q, lane, slice);
#pragma unroll
          for (int e = 0; e < SLICE; ++e) tile_a[r * D + lane * SLICE + e] = slice[e];
          load_slice(dout + q_base * D, i, seq_q, lane, slice);
          float partial = 0.0f;
#pragma unroll
          for (int e = 0; e < SLICE; e += 2) {
            tile_b[r * D + lane * SLICE + e] = slice[e];
            tile_b[r * D + lane * SLICE + e + 1] = slice[e + 1];
            float pair[2] = {0.0f, 0.0f};
            if (i < seq_q) kt::load_floats<T, 2>(o + (q_base + i) * D + lane * SLICE + e, pair);
            partial = fmaf(slice[e], pair[0], fmaf(slice[e + 1], pair[1], partial));
          }
          const float delta = kt::group_sum<GROUP>(partial);
          if (lane == 0) {
            row_lse[r] = i < seq_q ? lse[q_base + i] : infinity();
            row_delta[r] = delta;
          }
        }
        __syncthreads();
        const int rows = (int)min((long long)STREAM, seq_q - i0);
        for (int r = 0; r < rows; ++r) {
          const float* q_row = tile_a + r * D + lane * SLICE;
          const float* do_row = tile_b + r * D + lane * SLICE;
          const float s = group_dot(key, q_row);
          const float dp = group_dot(value, do_row);
          const bool seen = j < len.keys_visible(i0 + r);  // also false for j past seq_kv
          // exp(scale s - lse) in base 2; 0 for a row of no keys (lse = +inf).
          const float p = seen ? exp2f(s * scale_log2 - row_lse[r] * kLog2e) : 0.0f;
          const float grad_s = p * (dp - row_delta[r]);
#pragma unroll
          for (int e = 0; e < SLICE; ++e) {
            grad_v[e] = fmaf(p, do_row[e], grad_v[e]);
            grad_k[e] = fmaf(grad_s, q_row[e], grad_k[e]);
          }
        }
      }
    }
    if (j < seq_kv) {
      store_slice(dk + kv_base * D, j, lane, grad_k, scale);
      store_slice(dv + kv_base * D, j, lane, grad_v, 1.0f);
    }
    return;
  }

  // dq of query rows [i0, i0 + ROWS) of head `head`.
  const long long i0 = ((long long)blockIdx.x - key_blocks) * ROWS, i = i0 + row;
  if (i0 >= seq_q) return;
  const long long q_base = (batch * heads + head) * seq_q, kv_base = (batch * kv_heads + head / group) * seq_kv;
  float query[SLICE], grad_o[SLICE], out[SLICE], grad_q[SLICE];
  load_slice(q + q_base * D, i, seq_q, lane, query);
  load_slice(dout + q_base * D, i, seq_q, lane, grad_o);
  load_slice(o + q_base * D, i, seq_q, lane, out);
  const float delta = group_dot(grad_o, out);
  const float row_lse_i = i < seq_q ? lse[q_base + i] : infinity();
  const long long visible = i < seq_q ? len.keys_visible(i) : 0;
#pragma unroll
  for (int e = 0; e < SLICE; ++e) grad_q[e] = 0.0f;
  const long long last = min(i0 + ROWS, seq_q) - 1;
  const long long keys = len.keys_visible(last);  // those the block's last (latest) row sees
  for (long long j0 = 0; j0 < keys; j0 += STREAM) {
    __syncthreads();
    for (int r = row; r < STREAM; r += ROWS) {
      float ks[SLICE], vs[SLICE];
      load_slice(k + kv_base * D, j0 + r, seq_kv, lane, ks);
      load_slice(v + kv_base * D, j0 + r, seq_kv, lane, vs);
#pragma unroll
      for (int e = 0; e < SLICE; ++e) {
        tile_a[r * D + lane * SLICE + e] = ks[e];
        tile_b[r * D + lane * SLICE + e] = vs[e];
      }
    }
    __syncthreads();
    const int cols = (int)min((long long)STREAM, keys - j0);
    for (int c = 0; c < cols; ++c) {
      const float* k_row = tile_a + c * D + lane * SLICE;
      const float s = group_dot(query, k_row);
      const float dp = group_dot(grad_o, tile_b + c * D + lane * SLICE);
      const float p = j0 + c < visible ? exp2f(s * scale_log2 - row_lse_i * kLog2e) : 0.0f;
      const float grad_s = p * (dp - delta);
#pragma unroll
      for (int e = 0; e < SLICE; ++e) grad_q[e] = fmaf(grad_s, k_row[e], grad_q[e]);
    }
  }
  if (i < seq_q) store_slice(dq + q_base * D, i, lane, grad_q, scale);
}
