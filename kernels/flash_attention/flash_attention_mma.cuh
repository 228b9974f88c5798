// Flash attention, tensor-core path of sm_80-class GPUs (also a fallback on Hopper): fp16/bf16,
// fp32 softmax and accumulators, head_dim a multiple of 16.
//
// A block takes KT_BLOCK_Q query rows of one head (blockIdx.y) of one sequence (blockIdx.z);
// each of its KT_WARPS warps owns KT_BLOCK_Q / KT_WARPS of those rows. The block's Q tile is
// loaded once and kept in registers as mma fragments. Keys and values stream through
// KT_STAGES shared-memory stages of KT_BLOCK_KV rows (cp.async, zero-filled past the end). For
// each block of keys a warp computes its scores S = Q·Kᵀ with mma.sync, masks what its rows do
// not see (past seq_kv, or the causal triangle, only on blocks that need it), updates each row's
// running maximum and sum (online softmax in base 2, the scale folded into the exponent),
// rescales its output accumulators, and adds P·V, P taken straight from the score registers.
// Causal launches run the query blocks that see the most keys first.
// Shared rows are padded by 16 bytes, so the 8 rows an ldmatrix reads fall in distinct banks.
#pragma once

#include "kernels/common/cuda_mma.cuh"

namespace kt::attention {

constexpr int BQ = KT_BLOCK_Q, kWarps = KT_WARPS, kStages = KT_STAGES;
constexpr int kThreads = kWarps * 32;
constexpr int kWarpRows = BQ / kWarps, kMTiles = kWarpRows / 16;  // m16 tiles per warp
constexpr int kRow = D + 8;                                       // padded shared row, elements
constexpr int kQTile = BQ * kRow, kKvTile = BKV * kRow;
constexpr int kKSteps = D / 16;    // k16 steps of Q·Kᵀ
constexpr int kScoreTiles = BKV / 8;  // n8 tiles of S per m16 tile
constexpr int kOutTiles = D / 8;      // n8 tiles of O per m16 tile
static_assert(sizeof(T) == 2, "mma.sync m16n8k16 takes fp16 or bf16");
static_assert(kWarpRows % 16 == 0 && D % 16 == 0 && BKV % 16 == 0, "whole m16 tiles and k16 steps");
static_assert(kStages >= 2, "at least double buffering");

// Rows [row0, row0 + ROWS) of a [rows, D] matrix into a padded shared tile; zeros past `rows`.
template <int ROWS>
__device__ __forceinline__ void load_rows(T* tile, const T* matrix, long long row0, long long rows) {
  kt::mma::copy_rows<ROWS, D, kRow, kThreads>(tile, matrix, row0, rows);
}

// One m16 row tile of m16n8 accumulator tiles as the flat layout of the shared softmax
// (kernels/flash_attention/flash_attention_softmax.cuh): the same floats in the same order.
template <int TILES>
__device__ __forceinline__ float (&flat(float (&tiles)[TILES][4]))[TILES * 4] {
  return reinterpret_cast<float(&)[TILES * 4]>(tiles);
}

}  // namespace kt::attention

extern "C" __global__ void __launch_bounds__(kt::attention::kThreads)
    KT_ATTENTION_ENTRY(const kt::attention::T* __restrict__ q, const kt::attention::T* __restrict__ k,
                       const kt::attention::T* __restrict__ v, kt::attention::T* __restrict__ o,
                       float* __restrict__ lse, const float* __restrict__ scale KT_ATTENTION_MASK_TENSOR, long long,
                       long long heads, long long kv_heads, long long seq_q, long long seq_kv, long long,
                       long long KT_ATTENTION_MASK_DIMS) {
  using namespace kt::attention;
  KT_ATTENTION_MASK;
  using kt::mma::ldmatrix_x4;
  using kt::mma::ldmatrix_x4_trans;
  using kt::mma::mma_16816;
  using kt::mma::pack_pair;
  extern __shared__ __align__(16) unsigned char shared_raw[];
  T* q_tile = reinterpret_cast<T*>(shared_raw);
  T* k_tiles = q_tile + kQTile;
  T* v_tiles = k_tiles + kStages * kKvTile;

  const Lengths len{heads, kv_heads == 0 ? heads : kv_heads, seq_q, seq_kv};
  const long long q_block = kCausal ? gridDim.x - 1 - blockIdx.x : blockIdx.x;
  const long long head = blockIdx.y, batch = blockIdx.z;
  const long long kv_head = head / (len.heads / len.kv_heads);
  const long long i0 = q_block * BQ;
  const T* q_head = q + (batch * heads + head) * seq_q * D;
  const T* k_head = k + (batch * len.kv_heads + kv_head) * seq_kv * D;
  const T* v_head = v + (batch * len.kv_heads + kv_head) * seq_kv * D;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int warp_row = warp * kWarpRows;

  // Keys the block's last row sees bound the loop; blocks of keys the first row sees in full
  // need no mask (the first row sees the fewest).
  const long long last_row = (i0 + BQ < seq_q ? i0 + BQ : seq_q) - 1;
  const auto keys = mask.key_blocks(head, i0, static_cast<int>((len.keys_visible(last_row) + BKV - 1) / BKV),
                                    reinterpret_cast<int*>(v_tiles + kStages * kKvTile));
  const int kv_blocks = keys.count();
  const long long unmasked = len.keys_visible(i0);

  load_rows<BQ>(q_tile, q_head, i0, seq_q);  // in the first group, with the first keys
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < kv_blocks) {
      load_rows<BKV>(k_tiles + s * kKvTile, k_head, keys.start(s), seq_kv);
      load_rows<BKV>(v_tiles + s * kKvTile, v_head, keys.start(s), seq_kv);
    }
    kt::mma::commit_copies();
  }

  const float scale_log2 = 1.4426950408889634f * *scale;
  unsigned q_frag[kMTiles][kKSteps][4];
  float out[kMTiles][kOutTiles][4];
  float row_max[kMTiles][2], row_sum[kMTiles][2];  // rows lane/4 and lane/4 + 8 of each m16 tile
#pragma unroll
  for (int i = 0; i < kMTiles; ++i) {
#pragma unroll
    for (int n = 0; n < kOutTiles; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e) out[i][n][e] = 0.f;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      row_max[i][h] = -infinity();
      row_sum[i][h] = 0.f;  // this thread's columns only; the quad's four are summed at the end
    }
  }

  for (int j = 0; j < kv_blocks; ++j) {
    kt::mma::wait_copies<kStages - 2>();
    __syncthreads();  // block j is visible to all, and every warp is done with the stage refilled next
    if (j == 0) {
#pragma unroll
      for (int i = 0; i < kMTiles; ++i)
#pragma unroll
        for (int kk = 0; kk < kKSteps; ++kk)
          ldmatrix_x4(q_frag[i][kk], q_tile + (warp_row + i * 16 + lane % 16) * kRow + kk * 16 + lane / 16 * 8);
    }
    const int next = j + kStages - 1;
    if (next < kv_blocks) {
      load_rows<BKV>(k_tiles + next % kStages * kKvTile, k_head, keys.start(next), seq_kv);
      load_rows<BKV>(v_tiles + next % kStages * kKvTile, v_head, keys.start(next), seq_kv);
    }
    kt::mma::commit_copies();
    const T* k_stage = k_tiles + j % kStages * kKvTile;
    const T* v_stage = v_tiles + j % kStages * kKvTile;

    // S = Q·Kᵀ: K's rows are the columns of S, so K is read like GEMM's B in [n, k] layout.
    float score[kMTiles][kScoreTiles][4];
#pragma unroll
    for (int i = 0; i < kMTiles; ++i)
#pragma unroll
      for (int n = 0; n < kScoreTiles; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) score[i][n][e] = 0.f;
#pragma unroll
    for (int kk = 0; kk < kKSteps; ++kk)
#pragma unroll
      for (int n = 0; n < kScoreTiles; n += 2) {
        unsigned b[4];
        ldmatrix_x4(b, k_stage + (n * 8 + lane / 16 * 8 + lane % 8) * kRow + kk * 16 + (lane / 8) % 2 * 8);
#pragma unroll
        for (int i = 0; i < kMTiles; ++i) {
          mma_16816(score[i][n], q_frag[i][kk], b[0], b[1]);
          mma_16816(score[i][n + 1], q_frag[i][kk], b[2], b[3]);
        }
      }

#pragma unroll
    for (int i = 0; i < kMTiles; ++i) {
      float rescale[2];
      softmax_update(flat(score[i]), keys.tile(j), Rows{i0 + warp_row + i * 16 + lane / 4, unmasked, scale_log2, len}, row_max[i],
                     row_sum[i], rescale);
      rescale_output(flat(out[i]), rescale);
    }

    // O += P·V: two n8 score tiles make one k16 A fragment; V [keys, D] is B in [k, n] layout.
#pragma unroll
    for (int kk = 0; kk < BKV / 16; ++kk) {
      unsigned p[kMTiles][4];
#pragma unroll
      for (int i = 0; i < kMTiles; ++i) {
        p[i][0] = pack_pair(score[i][2 * kk][0], score[i][2 * kk][1]);
        p[i][1] = pack_pair(score[i][2 * kk][2], score[i][2 * kk][3]);
        p[i][2] = pack_pair(score[i][2 * kk + 1][0], score[i][2 * kk + 1][1]);
        p[i][3] = pack_pair(score[i][2 * kk + 1][2], score[i][2 * kk + 1][3]);
      }
#pragma unroll
      for (int n = 0; n < kOutTiles; n += 2) {
        unsigned b[4];
        ldmatrix_x4_trans(b, v_stage + (kk * 16 + (lane / 8) % 2 * 8 + lane % 8) * kRow + n * 8 + lane / 16 * 8);
#pragma unroll
        for (int i = 0; i < kMTiles; ++i) {
          mma_16816(out[i][n], p[i], b[0], b[1]);
          mma_16816(out[i][n + 1], p[i], b[2], b[3]);
        }
      }
    }
  }

  kt::mma::wait_copies<0>();  // a block whose rows see no key never waited for its copies

#pragma unroll
  for (int i = 0; i < kMTiles; ++i)
    store_rows(flat(out[i]), row_max[i], row_sum[i], i0 + warp_row + i * 16 + lane / 4,
               o + (batch * heads + head) * seq_q * D, lse + (batch * heads + head) * seq_q, seq_q);
}
