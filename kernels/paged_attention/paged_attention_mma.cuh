// Paged decode attention, the tensor-core path (sm_80+ mma.sync, fp16/bf16, head_dim a multiple
// of 16): each warp's partial result over its share of a block's span, written to its merge
// slots.
//
// The block's HEADS query heads (one kv head's group, or part of it) are the rows of one m16
// tile, zero rows below them; their fragments stay in registers. Each warp takes every WARPS-th
// tile of KT_TILE tokens and streams their key and value rows through its own ring of KT_STAGES
// shared-memory stages (cp.async, each token's page from the block table, zeros past the span),
// so no barrier of the block is needed after the query is loaded. Per tile: S = Q·Kᵀ with
// mma.sync, one online-softmax update of each row, O += P·V with P taken from the score
// registers. Decode is bound by reading the cache: tensor cores leave the SIMT path's per-token
// products and shuffles off the issue slots, which matters most when the group is large.
// Shared rows are padded by 16 bytes, so the 8 rows an ldmatrix reads fall in distinct banks.
#pragma once

#include "kernels/common/cuda_mma.cuh"
#include "kernels/paged_attention/paged_attention_common.cuh"

namespace kt::paged {

constexpr int TILE = KT_TILE, STAGES = KT_STAGES;
constexpr int kRow = D + 8;                       // padded shared row, elements
constexpr int kTileElements = TILE * kRow;        // one stage's keys (or values)
constexpr int kChunksPerRow = D / 8;              // 16-byte copies of a row
constexpr int kKSteps = D / 16, kScoreTiles = TILE / 8, kOutTiles = D / 8;
constexpr int kRingElements = WARPS * STAGES * 2 * kTileElements;
// Shared memory: the warps' rings, the query tile (16 rows), then the merge slots.
constexpr int kMergeOffset = (kRingElements + 16 * kRow) * int(sizeof(T)) / 4;
static_assert(sizeof(T) == 2, "mma.sync m16n8k16 takes fp16 or bf16");
static_assert(HEADS <= 16 && D % 16 == 0 && TILE % 16 == 0, "one m16 tile of heads, whole k16 steps");
static_assert(STAGES >= 2, "at least double buffering");

__device__ __forceinline__ float quad_max(float x) {
  x = fmaxf(x, kt::shfl_xor(x, 1));
  return fmaxf(x, kt::shfl_xor(x, 2));
}
__device__ __forceinline__ float quad_sum(float x) {
  x += kt::shfl_xor(x, 1);
  return x + kt::shfl_xor(x, 2);
}

__device__ __forceinline__ void warp_partials(const Span& span, float* shared, float* merge_area) {
  using kt::mma::ldmatrix_x4;
  using kt::mma::ldmatrix_x4_trans;
  using kt::mma::mma_16816;
  using kt::mma::pack_pair;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  T* const ring = reinterpret_cast<T*>(shared) + warp * STAGES * 2 * kTileElements;
  T* const q_tile = reinterpret_cast<T*>(shared) + kRingElements;
  const long long first = span.first, last = span.last;
  const long long tiles = (last - first + TILE - 1) / TILE;
  const int own = tiles > warp ? int((tiles - warp + WARPS - 1) / WARPS) : 0;  // tiles warp, warp + WARPS, ...

  // The query rows, by every thread of the block.
  for (int c = threadIdx.x; c < 16 * kChunksPerRow; c += THREADS) {
    const int r = c / kChunksPerRow, col = c % kChunksPerRow * 8;
    kt::mma::copy_16(q_tile + r * kRow + col, span.q + (r < HEADS ? r * D + col : 0), r < HEADS);
  }
  kt::mma::commit_copies();
  // The keys and values of this warp's n-th tile into stage s: each lane copies 16-byte chunks
  // of whole rows; a token past the span is zeros (its scores are masked, its values must not
  // be NaN).
  const auto issue = [&](int n, int s) {
    const long long t0 = first + ((long long)n * WARPS + warp) * TILE;
    T* const keys = ring + s * 2 * kTileElements;
#pragma unroll 4
    for (int c = lane; c < TILE * kChunksPerRow; c += 32) {
      const int r = c / kChunksPerRow, col = c % kChunksPerRow * 8;
      const long long t = t0 + r;
      const bool valid = t < last;
      const long long row = valid ? span.row(t, span.table[t / PAGE]) + col : 0;
      kt::mma::copy_16(keys + r * kRow + col, span.k_cache + row, valid);
      kt::mma::copy_16(keys + kTileElements + r * kRow + col, span.v_cache + row, valid);
    }
  };
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < own) issue(s, s);
    kt::mma::commit_copies();
  }
  kt::mma::wait_copies<STAGES - 1>();  // the query's group (the oldest) has landed
  __syncthreads();
  unsigned q_frag[kKSteps][4];
#pragma unroll
  for (int kk = 0; kk < kKSteps; ++kk) ldmatrix_x4(q_frag[kk], q_tile + (lane % 16) * kRow + kk * 16 + lane / 16 * 8);

  float out[kOutTiles][4];
  float row_max[2], row_sum[2];  // rows lane / 4 and lane / 4 + 8; sums of this thread's columns
#pragma unroll
  for (int n = 0; n < kOutTiles; ++n)
#pragma unroll
    for (int e = 0; e < 4; ++e) out[n][e] = 0.0f;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    row_max[h] = minus_infinity();
    row_sum[h] = 0.0f;
  }

  for (int n = 0; n < own; ++n) {
    kt::mma::wait_copies<STAGES - 2>();  // this lane's copies of tile n have landed
    __syncwarp();  // ... and every lane's are visible; every lane is done with the stage refilled next
    if (n + STAGES - 1 < own) issue(n + STAGES - 1, (n + STAGES - 1) % STAGES);
    kt::mma::commit_copies();
    const T* keys = ring + n % STAGES * 2 * kTileElements;
    const T* values = keys + kTileElements;
    const long long t0 = first + ((long long)n * WARPS + warp) * TILE;

    // S = Q·Kᵀ: K's rows (tokens) are the columns of S, read like GEMM's B in [n, k] layout.
    float score[kScoreTiles][4];
#pragma unroll
    for (int j = 0; j < kScoreTiles; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) score[j][e] = 0.0f;
#pragma unroll
    for (int kk = 0; kk < kKSteps; ++kk)
#pragma unroll
      for (int j = 0; j < kScoreTiles; j += 2) {
        unsigned b[4];
        ldmatrix_x4(b, keys + (j * 8 + lane / 16 * 8 + lane % 8) * kRow + kk * 16 + (lane / 8) % 2 * 8);
        mma_16816(score[j], q_frag[kk], b[0], b[1]);
        mma_16816(score[j + 1], q_frag[kk], b[2], b[3]);
      }

    // One online-softmax update per row for the tile; tokens past the span are masked.
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float tile_max = minus_infinity();
#pragma unroll
      for (int j = 0; j < kScoreTiles; ++j)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          float& s = score[j][h * 2 + e];
          s = t0 + j * 8 + lane % 4 * 2 + e < last ? s * span.scale_log2 : minus_infinity();
          tile_max = fmaxf(tile_max, s);
        }
      const float new_max = fmaxf(row_max[h], quad_max(tile_max));  // the tile has a token: finite
      const float rescale = exp2f(row_max[h] - new_max);             // 0 for the first tile
      row_max[h] = new_max;
      float sum = 0.0f;
#pragma unroll
      for (int j = 0; j < kScoreTiles; ++j)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          float& s = score[j][h * 2 + e];
          s = exp2f(s - new_max);
          sum += s;
        }
      row_sum[h] = row_sum[h] * rescale + sum;
#pragma unroll
      for (int j = 0; j < kOutTiles; ++j)
#pragma unroll
        for (int e = 0; e < 2; ++e) out[j][h * 2 + e] *= rescale;
    }

    // O += P·V: two n8 score tiles make one k16 A fragment; V [tokens, D] is B in [k, n] layout.
#pragma unroll
    for (int kk = 0; kk < TILE / 16; ++kk) {
      const unsigned p[4] = {pack_pair(score[2 * kk][0], score[2 * kk][1]), pack_pair(score[2 * kk][2], score[2 * kk][3]),
                             pack_pair(score[2 * kk + 1][0], score[2 * kk + 1][1]),
                             pack_pair(score[2 * kk + 1][2], score[2 * kk + 1][3])};
#pragma unroll
      for (int j = 0; j < kOutTiles; j += 2) {
        unsigned b[4];
        ldmatrix_x4_trans(b, values + (kk * 16 + (lane / 8) % 2 * 8 + lane % 8) * kRow + j * 8 + lane / 16 * 8);
        mma_16816(out[j], p, b[0], b[1]);
        mma_16816(out[j + 1], p, b[2], b[3]);
      }
    }
  }
  kt::mma::wait_copies<0>();  // a warp with no tile never waited for its (empty) groups

  // This warp's slots: rows below HEADS only (the rest are padding).
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int r = lane / 4 + h * 8;
    const float sum = quad_sum(row_sum[h]);
    if (r >= HEADS) continue;
    float* slot = merge_area + (warp * HEADS + r) * kStride;
#pragma unroll
    for (int j = 0; j < kOutTiles; ++j)
#pragma unroll
      for (int e = 0; e < 2; ++e) slot[j * 8 + lane % 4 * 2 + e] = out[j][h * 2 + e];
    if (lane % 4 == 0) {
      slot[D] = row_max[h];
      slot[D + 1] = sum;
    }
  }
}

}  // namespace kt::paged
