// Flash attention's backward on the tensor cores of sm_80-class GPUs (mma.sync m16n8k16, also
// run on Hopper): fp16/bf16, head_dim a multiple of 16, fp32 accumulators, every product on the
// tensor cores.
//
// A block of the first kind (dk, dv of KT_BLOCK_ROWS keys of one kv head) keeps its k and v rows
// in shared memory and streams every query row of the head group that sees them through
// KT_STAGES shared stages of KT_STREAM_ROWS rows (q, dout and o by cp.async, each row's lse
// beside them). Each of its KT_WARPS warps owns KT_BLOCK_ROWS / KT_WARPS keys and computes the
// transposed products Sᵀ = K·Qᵀ and dPᵀ = V·doutᵀ, keys as rows: Pᵀ and dSᵀ are then, in the
// warp's registers, the A operands of dV += Pᵀ·dout and dK += dSᵀ·Q, so the sums over query
// rows never leave the warp. A stage's D = dout·o is computed from its tiles, a row per warp.
// A block of the second kind (dq of KT_BLOCK_ROWS query rows of one head) keeps q and dout in
// shared memory with each row's lse and D, streams keys and values through the stages, and each
// warp, owning KT_BLOCK_ROWS / KT_WARPS query rows, computes S = Q·Kᵀ, dP = dout·Vᵀ and
// dQ += dS·K (KT_DQ separate: deterministic). With KT_DQ atomic there are key blocks only: each
// also writes its dSᵀ to shared memory and adds dQ += dS·K of every query tile it streams into
// fp32 sums in the workspace (atomics), and the last key block to add to a tile (a counter per
// tile) writes that tile's dq and leaves its sums and counter zero for the next launch: three
// products fewer, at the price of an order of additions that varies from run to run. P and dS
// are rounded to the input type for their products, as in the forward's P·V. Shared rows are padded by 16 bytes so that the 8 rows an ldmatrix reads fall in
// distinct banks.
#pragma once

#include "kernels/common/cuda_mma.cuh"

namespace kt::backward {

constexpr int kWarps = KT_WARPS, kStages = KT_STAGES, kThreads = kWarps * 32;
constexpr int kWarpRows = ROWS / kWarps, kMTiles = kWarpRows / 16;  // m16 tiles per warp
constexpr int kRow = D + 8;                                         // padded shared row, elements
constexpr int kKSteps = D / 16;          // k16 steps over the head
constexpr int kStreamTiles = STREAM / 8;  // n8 tiles of a warp's scores per m16 tile
constexpr int kHeadTiles = D / 8;         // n8 tiles of a gradient per m16 tile
static_assert(sizeof(T) == 2, "mma.sync m16n8k16 takes fp16 or bf16");
static_assert(kWarpRows % 16 == 0 && D % 16 == 0 && STREAM % 16 == 0, "whole m16 tiles and k16 steps");
static_assert(kStages >= 2, "at least double buffering");

#define KT_DQ_separate 0
#define KT_DQ_atomic 1
constexpr bool kAtomicDq = KT_DQ == KT_DQ_atomic;
// Atomic dq: a query tile's dq (STREAM x D) = dS (STREAM x ROWS keys) · K, its m16 tiles spread
// over the warps, warps sharing one taking slices of the head.
constexpr int kDqM = STREAM / 16;
constexpr int kDqGroups = kWarps >= kDqM ? kWarps / kDqM : 1;  // warps per m16 tile
constexpr int kDqTiles = kHeadTiles / kDqGroups;              // n8 tiles of a warp's slice
constexpr int kDsRow = STREAM + 8;                            // padded shared row of dSᵀ, elements
static_assert(!kAtomicDq || ((kWarps % kDqM == 0 || kDqM % kWarps == 0) && kHeadTiles % kDqGroups == 0 &&
                             kDqTiles % 2 == 0),
              "whole m16 tiles per warp and whole n16 slices of the head");

using Scores = float[kMTiles][kStreamTiles][4];
using Gradient = float[kMTiles][kHeadTiles][4];

// Rows [row0, row0 + N) of a [rows, D] matrix into a padded shared tile; zeros past `rows`.
template <int N>
__device__ __forceinline__ void load_rows(T* tile, const T* matrix, long long row0, long long rows) {
  kt::mma::copy_rows<N, D, kRow, kThreads>(tile, matrix, row0, rows);
}

// out[r] = a_r · b_r for the rows r < valid of two row-major matrices (`stride` elements a row),
// a row per warp in turn; 0 for the rows in [valid, rows).
__device__ __forceinline__ void row_dots(float* out, const T* a, const T* b, long long stride, int rows, int valid) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  for (int r = warp; r < rows; r += kWarps) {
    float sum = 0.0f;
    for (int c = lane * 2; r < valid && c < D; c += 64) {
      float x[2], y[2];
      load_floats<T, 2>(a + r * stride + c, x);
      load_floats<T, 2>(b + r * stride + c, y);
      sum = fmaf(x[0], y[0], fmaf(x[1], y[1], sum));
    }
    sum = group_sum<32>(sum);
    if (lane == 0) out[r] = sum;
  }
}

// Accumulator tiles (Scores, Gradient, a warp's slice of dq) to zero.
template <int M, int N>
__device__ __forceinline__ void zero(float (&tiles)[M][N][4]) {
#pragma unroll
  for (int i = 0; i < M; ++i)
#pragma unroll
    for (int n = 0; n < N; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e) tiles[i][n][e] = 0.0f;
}

// c[i][n] = A·Bᵀ over the head: A the warp's m16 tiles i (rows row0 + 16 i of `a_tile`), B the
// STREAM rows of `b_tile` (its rows are the columns of c, read like GEMM's B in [n, k] layout).
__device__ __forceinline__ void head_products(Scores& c, const T* a_tile, int row0, const T* b_tile) {
  const int lane = threadIdx.x % 32;
  zero(c);
#pragma unroll
  for (int kk = 0; kk < kKSteps; ++kk) {
    unsigned a[kMTiles][4];
#pragma unroll
    for (int i = 0; i < kMTiles; ++i)
      kt::mma::ldmatrix_x4(a[i], a_tile + (row0 + i * 16 + lane % 16) * kRow + kk * 16 + lane / 16 * 8);
#pragma unroll
    for (int n = 0; n < kStreamTiles; n += 2) {
      unsigned b[4];
      kt::mma::ldmatrix_x4(b, b_tile + (n * 8 + lane / 16 * 8 + lane % 8) * kRow + kk * 16 + (lane / 8) % 2 * 8);
#pragma unroll
      for (int i = 0; i < kMTiles; ++i) {
        kt::mma::mma_16816(c[i][n], a[i], b[0], b[1]);
        kt::mma::mma_16816(c[i][n + 1], a[i], b[2], b[3]);
      }
    }
  }
}

// acc += X·B: X the warp's scores-shaped tiles (m16 x STREAM), rounded to T in pairs (two n8 tiles
// of C are one k16 A fragment), B the STREAM rows of `tile` as [k, n] with n over the head.
__device__ __forceinline__ void accumulate(Gradient& acc, const Scores& x, const T* tile) {
  const int lane = threadIdx.x % 32;
#pragma unroll
  for (int kk = 0; kk < STREAM / 16; ++kk) {
    unsigned a[kMTiles][4];
#pragma unroll
    for (int i = 0; i < kMTiles; ++i) {
      a[i][0] = kt::mma::pack_pair(x[i][2 * kk][0], x[i][2 * kk][1]);
      a[i][1] = kt::mma::pack_pair(x[i][2 * kk][2], x[i][2 * kk][3]);
      a[i][2] = kt::mma::pack_pair(x[i][2 * kk + 1][0], x[i][2 * kk + 1][1]);
      a[i][3] = kt::mma::pack_pair(x[i][2 * kk + 1][2], x[i][2 * kk + 1][3]);
    }
#pragma unroll
    for (int n = 0; n < kHeadTiles; n += 2) {
      unsigned b[4];
      kt::mma::ldmatrix_x4_trans(b, tile + (kk * 16 + (lane / 8) % 2 * 8 + lane % 8) * kRow + n * 8 + lane / 16 * 8);
#pragma unroll
      for (int i = 0; i < kMTiles; ++i) {
        kt::mma::mma_16816(acc[i][n], a[i], b[0], b[1]);
        kt::mma::mma_16816(acc[i][n + 1], a[i], b[2], b[3]);
      }
    }
  }
}

// Rows row0 + (the warp's rows) of a [rows, D] matrix from accumulator tiles, times `scale`.
__device__ __forceinline__ void store_gradient(T* matrix, long long row0, long long rows, const Gradient& acc,
                                               float scale) {
  const int lane = threadIdx.x % 32, warp_row = threadIdx.x / 32 * kWarpRows;
#pragma unroll
  for (int i = 0; i < kMTiles; ++i)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const long long row = row0 + warp_row + i * 16 + lane / 4 + h * 8;
      if (row >= rows) continue;
#pragma unroll
      for (int n = 0; n < kHeadTiles; ++n) {
        const float pair[2] = {acc[i][n][2 * h] * scale, acc[i][n][2 * h + 1] * scale};
        store_floats<T, 2>(matrix + row * D + n * 8 + lane % 4 * 2, pair);
      }
    }
}



// Atomic dq of one query tile: dS·K, dSᵀ (ROWS keys x STREAM queries) in `ds_tile` and K's rows
// in `k_tile`, added into the fp32 sums of rows row0 + m (those below `rows`) of `sums`.
__device__ __forceinline__ void add_dq(float* sums, long long row0, long long rows, const T* ds_tile, const T* k_tile) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  for (int m = warp / kDqGroups; m < kDqM; m += kWarps / kDqGroups) {
    const int n0 = warp % kDqGroups * kDqTiles;
    float acc[1][kDqTiles][4];  // one m16 tile
    zero(acc);
#pragma unroll
    for (int kk = 0; kk < ROWS / 16; ++kk) {
      // dS (queries x keys) as the A operand from dSᵀ stored keys x queries: each 8x8 transposed.
      unsigned a[4];
      kt::mma::ldmatrix_x4_trans(a, ds_tile + (kk * 16 + lane / 16 * 8 + lane % 8) * kDsRow + m * 16 + (lane / 8) % 2 * 8);
#pragma unroll
      for (int n = 0; n < kDqTiles; n += 2) {
        unsigned b[4];
        kt::mma::ldmatrix_x4_trans(b, k_tile + (kk * 16 + (lane / 8) % 2 * 8 + lane % 8) * kRow + (n0 + n) * 8 + lane / 16 * 8);
        kt::mma::mma_16816(acc[0][n], a, b[0], b[1]);
        kt::mma::mma_16816(acc[0][n + 1], a, b[2], b[3]);
      }
    }
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const long long row = row0 + m * 16 + lane / 4 + h * 8;
      if (row >= rows) continue;
#pragma unroll
      for (int n = 0; n < kDqTiles; ++n) {
        float* sum = sums + row * D + (n0 + n) * 8 + lane % 4 * 2;
        atomicAdd(sum, acc[0][n][2 * h]);
        atomicAdd(sum + 1, acc[0][n][2 * h + 1]);
      }
    }
  }
}

// The last key block to add to a query tile: its dq (sums times `scale`) into `out`, rows row0..
// (those below `rows`), and its sums back to zero for the next launch. The sums are read and
// written at L2 (where the other blocks' atomics landed), not through this SM's L1.
__device__ __forceinline__ void finish_dq(float* sums, T* out, long long row0, long long rows, float scale) {
  const int elements = static_cast<int>((rows - row0 < STREAM ? rows - row0 : STREAM) * D);
  for (int e = threadIdx.x * 2; e < elements; e += kThreads * 2) {
    const float2 x = __ldcg(reinterpret_cast<const float2*>(sums + row0 * D + e));
    const float pair[2] = {x.x * scale, x.y * scale};
    store_floats<T, 2>(out + row0 * D + e, pair);
    __stcg(reinterpret_cast<float2*>(sums + row0 * D + e), make_float2(0.0f, 0.0f));
  }
}


// The pipeline both kinds of blocks run. start_stages: the block's two resident tiles (rows
// [row0, row0 + ROWS) of a and b) and the first kStages - 1 streamed tiles in flight, the residents
// in the first group. next_stage: waits for tile t, then refills the stage the block is done with.
template <class Issue>
__device__ __forceinline__ void start_stages(T* resident_a, const T* a, T* resident_b, const T* b, long long row0,
                                             long long rows, int tiles, Issue issue) {
  load_rows<ROWS>(resident_a, a, row0, rows);
  load_rows<ROWS>(resident_b, b, row0, rows);
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < tiles) issue(s);
    kt::mma::commit_copies();
  }
}
template <class Issue>
__device__ __forceinline__ void next_stage(int t, int tiles, Issue issue) {
  kt::mma::wait_copies<kStages - 2>();
  __syncthreads();  // tile t is visible to all, and every warp is done with the stage refilled next
  if (t + kStages - 1 < tiles) issue(t + kStages - 1);
  kt::mma::commit_copies();
}

}  // namespace kt::backward

extern "C" __global__ void __launch_bounds__(kt::backward::kThreads)
flash_attention_backward_kernel(const KT_T* __restrict__ q, const KT_T* __restrict__ k, const KT_T* __restrict__ v,
                                const KT_T* __restrict__ o, const KT_T* __restrict__ dout,
                                const float* __restrict__ lse, const float* __restrict__ scale_in,
                                KT_T* __restrict__ dq, KT_T* __restrict__ dk, KT_T* __restrict__ dv, long long batches,
                                long long heads, long long kv_heads_dim, long long seq_q, long long seq_kv, long long,
                                long long, float* __restrict__ workspace) {
  using namespace kt::backward;
  extern __shared__ __align__(16) unsigned char shared_raw[];
  // Both kinds: two resident tiles of ROWS rows, then the stages.
  T* resident_a = reinterpret_cast<T*>(shared_raw);
  T* resident_b = resident_a + ROWS * kRow;
  T* stages = resident_b + ROWS * kRow;

  const long long kv_heads = kv_heads_dim == 0 ? heads : kv_heads_dim, group = heads / kv_heads;
  const Lengths len{seq_q, seq_kv};
  const long long key_blocks = (seq_kv + ROWS - 1) / ROWS;
  const long long batch = blockIdx.z, head = blockIdx.y;
  const int lane = threadIdx.x % 32, warp_row = threadIdx.x / 32 * kWarpRows;
  const float scale = *scale_in, scale_log2 = scale * kLog2e;

  if ((long long)blockIdx.x < key_blocks) {
    // dk, dv of keys [j0, j0 + ROWS) of kv head `head`; a stage holds q, dout and o rows.
    if (head >= kv_heads) return;
    constexpr int kStage = 3 * STREAM * kRow;
    float* stage_lse = reinterpret_cast<float*>(stages + kStages * kStage);  // [kStages][STREAM], times log2(e)
    float* stage_delta = stage_lse + kStages * STREAM;                      // [kStages][STREAM]
    T* ds_tile = reinterpret_cast<T*>(stage_delta + kStages * STREAM);       // atomic dq: [ROWS][kDsRow] dSᵀ
    // Atomic dq: fp32 sums like dq, then a counter per query tile of each head.
    float* sums = workspace;
    int* counters = kAtomicDq ? reinterpret_cast<int*>(workspace + batches * heads * seq_q * D) : nullptr;
    const long long q_tiles = (seq_q + STREAM - 1) / STREAM;
    __shared__ int finishing;
    const long long j0 = (long long)blockIdx.x * ROWS;
    const long long kv_base = (batch * kv_heads + head) * seq_kv;
    // Query tiles start at multiples of STREAM (atomic dq counts arrivals per tile).
    const long long first = len.first_query(j0) / STREAM * STREAM;
    const int per_head = first < seq_q ? static_cast<int>((seq_q - first + STREAM - 1) / STREAM) : 0;
    const int tiles = per_head * static_cast<int>(group);
    // Tile t: query rows [first + (t % per_head) STREAM, + STREAM) of head `head * group + t / per_head`.
    auto issue = [&](int t) {
      T* stage = stages + t % kStages * kStage;
      const long long q_base = (batch * heads + head * group + t / per_head) * seq_q;
      const long long i0 = first + static_cast<long long>(t % per_head) * STREAM;
      load_rows<STREAM>(stage, q + q_base * D, i0, seq_q);
      load_rows<STREAM>(stage + STREAM * kRow, dout + q_base * D, i0, seq_q);
      load_rows<STREAM>(stage + 2 * STREAM * kRow, o + q_base * D, i0, seq_q);
      for (int r = threadIdx.x; r < STREAM; r += kThreads)
        stage_lse[t % kStages * STREAM + r] = i0 + r < seq_q ? lse[q_base + i0 + r] * kLog2e : infinity();
    };

    if (kAtomicDq && kCausal && blockIdx.x == 0 && seq_q > seq_kv) {
      // Query tiles whose rows all see no key have no key block to finish them: dq = 0.
      const long long rows = (seq_q - seq_kv) / STREAM * STREAM;
      for (long long h = head * group; h < (head + 1) * group; ++h)
        for (long long e = threadIdx.x * 2; e < rows * D; e += kThreads * 2) {
          const float zeros[2] = {0.0f, 0.0f};
          kt::store_floats<T, 2>(dq + (batch * heads + h) * seq_q * D + e, zeros);
        }
    }
    start_stages(resident_a, k + kv_base * D, resident_b, v + kv_base * D, j0, seq_kv, tiles, issue);
    Gradient grad_k, grad_v;
    zero(grad_k);
    zero(grad_v);
    for (int t = 0; t < tiles; ++t) {
      next_stage(t, tiles, issue);
      const int s = t % kStages;
      const T* q_stage = stages + s * kStage;
      const T* dout_stage = q_stage + STREAM * kRow;
      row_dots(stage_delta + s * STREAM, dout_stage, dout_stage + STREAM * kRow, kRow, STREAM, STREAM);
      __syncthreads();

      Scores p, grad_s;  // Sᵀ then Pᵀ; dPᵀ then dSᵀ
      head_products(p, resident_a, warp_row, q_stage);
      head_products(grad_s, resident_b, warp_row, dout_stage);
      const long long i0 = first + static_cast<long long>(t % per_head) * STREAM;
#pragma unroll
      for (int i = 0; i < kMTiles; ++i)
#pragma unroll
        for (int n = 0; n < kStreamTiles; ++n)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const long long j = j0 + warp_row + i * 16 + lane / 4 + e / 2 * 8;
            const int col = n * 8 + lane % 4 * 2 + e % 2;
            // A query row past seq_q has lse +inf (probability 0); keys past seq_kv are never stored.
            const bool seen = !kCausal || j < len.keys_visible(i0 + col);
            p[i][n][e] = seen ? exp2f(p[i][n][e] * scale_log2 - stage_lse[s * STREAM + col]) : 0.0f;
            grad_s[i][n][e] = p[i][n][e] * (grad_s[i][n][e] - stage_delta[s * STREAM + col]);
          }
      if constexpr (kAtomicDq) {
#pragma unroll
        for (int i = 0; i < kMTiles; ++i)
#pragma unroll
          for (int n = 0; n < kStreamTiles; ++n)
#pragma unroll
            for (int h = 0; h < 2; ++h)
              *reinterpret_cast<unsigned*>(ds_tile + (warp_row + i * 16 + lane / 4 + h * 8) * kDsRow + n * 8 +
                                           lane % 4 * 2) = kt::mma::pack_pair(grad_s[i][n][2 * h], grad_s[i][n][2 * h + 1]);
      }
      accumulate(grad_v, p, dout_stage);
      accumulate(grad_k, grad_s, q_stage);
      if constexpr (kAtomicDq) {
        __syncthreads();  // every warp's dSᵀ is in ds_tile
        const long long h = head * group + t / per_head, q_base = (batch * heads + h) * seq_q;
        add_dq(sums + q_base * D, i0, seq_q, ds_tile, resident_a);
        __threadfence();  // this block's additions are visible before its arrival is counted
        __syncthreads();
        if (threadIdx.x == 0) {
          const long long tile = (batch * heads + h) * q_tiles + i0 / STREAM;
          const long long last_row = (i0 + STREAM < seq_q ? i0 + STREAM : seq_q) - 1;
          const int expected = static_cast<int>((len.keys_visible(last_row) + ROWS - 1) / ROWS);
          finishing = atomicAdd(counters + tile, 1) == expected - 1;
          if (finishing) counters[tile] = 0;  // ready for the next launch
        }
        __syncthreads();
        if (finishing) {
          __threadfence();
          finish_dq(sums + q_base * D, dq + q_base * D, i0, seq_q, scale);
        }
      }
    }
    kt::mma::wait_copies<0>();
    store_gradient(dk + kv_base * D, j0, seq_kv, grad_k, scale);
    store_gradient(dv + kv_base * D, j0, seq_kv, grad_v, 1.0f);
    return;
  }
  if constexpr (kAtomicDq) return;  // no query blocks are launched

  // dq of query rows [i0, i0 + ROWS) of head `head`; a stage holds k and v rows.
  const long long i0 = ((long long)blockIdx.x - key_blocks) * ROWS;
  if (i0 >= seq_q) return;
  constexpr int kStage = 2 * STREAM * kRow;
  float* row_lse = reinterpret_cast<float*>(stages + kStages * kStage);  // [ROWS], times log2(e)
  float* row_delta = row_lse + ROWS;                                     // [ROWS]
  const long long q_base = (batch * heads + head) * seq_q, kv_base = (batch * kv_heads + head / group) * seq_kv;
  const int rows = static_cast<int>(seq_q - i0 < ROWS ? seq_q - i0 : ROWS);
  const long long keys = len.keys_visible(i0 + rows - 1);  // those the block's last (latest) row sees
  const int tiles = static_cast<int>((keys + STREAM - 1) / STREAM);
  auto issue = [&](int t) {
    T* stage = stages + t % kStages * kStage;
    load_rows<STREAM>(stage, k + kv_base * D, static_cast<long long>(t) * STREAM, seq_kv);
    load_rows<STREAM>(stage + STREAM * kRow, v + kv_base * D, static_cast<long long>(t) * STREAM, seq_kv);
  };

  start_stages(resident_a, q + q_base * D, resident_b, dout + q_base * D, i0, seq_q, tiles, issue);
  // While the copies fly: each row's lse and D = dout · o, straight from global memory.
  for (int r = threadIdx.x; r < ROWS; r += kThreads) row_lse[r] = r < rows ? lse[q_base + i0 + r] * kLog2e : infinity();
  row_dots(row_delta, dout + (q_base + i0) * D, o + (q_base + i0) * D, D, ROWS, rows);
  __syncthreads();
  float my_lse[kMTiles][2], my_delta[kMTiles][2];
  long long visible[kMTiles][2];
#pragma unroll
  for (int i = 0; i < kMTiles; ++i)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int r = warp_row + i * 16 + lane / 4 + h * 8;
      my_lse[i][h] = row_lse[r];
      my_delta[i][h] = row_delta[r];
      visible[i][h] = len.keys_visible(i0 + r);
    }

  Gradient grad_q;
  zero(grad_q);
  for (int t = 0; t < tiles; ++t) {
    next_stage(t, tiles, issue);
    const T* k_stage = stages + t % kStages * kStage;
    const T* v_stage = k_stage + STREAM * kRow;

    Scores p, grad_s;  // S then P; dP then dS
    head_products(p, resident_a, warp_row, k_stage);
    head_products(grad_s, resident_b, warp_row, v_stage);
    const long long j0 = static_cast<long long>(t) * STREAM;
#pragma unroll
    for (int i = 0; i < kMTiles; ++i)
#pragma unroll
      for (int n = 0; n < kStreamTiles; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int h = e / 2;
          // Keys past seq_kv (zero rows) are past every row's visible keys too.
          const bool seen = j0 + n * 8 + lane % 4 * 2 + e % 2 < visible[i][h];
          p[i][n][e] = seen ? exp2f(p[i][n][e] * scale_log2 - my_lse[i][h]) : 0.0f;
          grad_s[i][n][e] = p[i][n][e] * (grad_s[i][n][e] - my_delta[i][h]);
        }
    accumulate(grad_q, grad_s, k_stage);
  }
  kt::mma::wait_copies<0>();
  store_gradient(dq + q_base * D, i0, seq_q, grad_q, scale);
}
