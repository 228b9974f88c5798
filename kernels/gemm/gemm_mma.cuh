// GEMM, tensor-core path of sm_80-class GPUs (also a fallback on Hopper): fp16/bf16 in, fp32
// accumulation, either layout of B. A block computes a KT_BLOCK_M x KT_BLOCK_N tile with
// KT_WARPS_M x KT_WARPS_N warps; KT_BLOCK_K-deep slices of A and B stream through KT_STAGES
// shared-memory stages with cp.async (16-byte copies, zero-filled past the edges), and each warp
// runs mma.sync m16n8k16 on fragments loaded with ldmatrix (ldmatrix.trans when B is [k, n]).
// Rows of A and B must start on 16-byte boundaries: k % 8 == 0, and n % 8 == 0 when B is [k, n].
// Shared rows are padded by 16 bytes, so the 8 rows an ldmatrix reads fall in distinct banks.
// With a LayerNorm of A (layernorm_linear) the block first takes its share of the row statistics
// and reads its rows' (RowStatistics), then normalises each A slice in shared memory once it has
// landed, before the warps read it.
#pragma once

#include "kernels/common/cuda_mma.cuh"

namespace kt::gemm {

constexpr int BM = KT_BLOCK_M, BN = KT_BLOCK_N, BK = KT_BLOCK_K, kStages = KT_STAGES;
constexpr int kWarpsM = KT_WARPS_M, kWarpsN = KT_WARPS_N, kThreads = kWarpsM * kWarpsN * 32;
constexpr int kWarpM = BM / kWarpsM, kWarpN = BN / kWarpsN;  // one warp's tile
constexpr int kTilesM = kWarpM / 16, kTilesN = kWarpN / 8;   // m16n8 accumulator tiles per warp
constexpr int kPad = 8;                                       // 16 bytes of padding per shared row
constexpr int kARow = BK + kPad;                              // A slice: [BM][BK], k contiguous
// B slice: [BN][BK] (k contiguous) for B [n, k]; [BK][BN] (n contiguous) for B [k, n].
constexpr int kBRows = kBIsNk ? BN : BK, kBRow = (kBIsNk ? BK : BN) + kPad;
constexpr int kAStage = BM * kARow, kBStage = kBRows * kBRow;
static_assert(sizeof(T) == 2, "mma.sync m16n8k16 takes fp16 or bf16");
static_assert(kWarpM % 16 == 0 && kWarpN % 16 == 0 && BK % 16 == 0, "whole m16 tiles, pairs of n8 tiles, k16 steps");

using kt::mma::copy_16;
using kt::mma::ldmatrix_x4;
using kt::mma::ldmatrix_x4_trans;
using kt::mma::mma_16816;

// Slice `p0` of A and B into one stage: 8-element chunks, each thread taking every kThreads-th.
__device__ __forceinline__ void load_slice(T* a_stage, T* b_stage, const T* a, const T* b, long long m, long long n,
                                           long long k, long long row0, long long col0, long long p0) {
  constexpr int kAChunks = BM * BK / 8;
  for (int i = threadIdx.x; i < kAChunks; i += kThreads) {
    const int r = i / (BK / 8), c = i % (BK / 8) * 8;
    const long long row = row0 + r, depth = p0 + c;
    const bool valid = row < m && depth < k;
    copy_16(a_stage + r * kARow + c, valid ? a + row * k + depth : a, valid);
  }
  constexpr int kBChunks = BN * BK / 8;
  for (int i = threadIdx.x; i < kBChunks; i += kThreads) {
    if constexpr (kBIsNk) {
      const int r = i / (BK / 8), c = i % (BK / 8) * 8;
      const long long col = col0 + r, depth = p0 + c;
      const bool valid = col < n && depth < k;
      copy_16(b_stage + r * kBRow + c, valid ? b + col * k + depth : b, valid);
    } else {
      const int r = i / (BN / 8), c = i % (BN / 8) * 8;
      const long long depth = p0 + r, col = col0 + c;
      const bool valid = depth < k && col < n;
      copy_16(b_stage + r * kBRow + c, valid ? b + depth * n + col : b, valid);
    }
  }
}

template <class ALoad, int kEpi = kEpilogue>
__device__ __forceinline__ void mma_gemm(const Operands& o, const ALoad& a_load) {
  const T* __restrict__ a = o.a;
  const T* __restrict__ b = o.b;
  const long long m = o.m, n = o.n, k = o.k;
  extern __shared__ __align__(16) unsigned char shared_raw[];
  __shared__ float row_mean[ALoad::kNormalises ? BM : 1], row_inv_std[ALoad::kNormalises ? BM : 1];
  T* a_tiles = reinterpret_cast<T*>(shared_raw);
  T* b_tiles = a_tiles + kStages * kAStage;
  const long long tiles_n = (n + BN - 1) / BN;
  const long long row0 = (o.tile / tiles_n) * BM, col0 = (o.tile % tiles_n) * BN;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int warp_row = (warp / kWarpsN) * kWarpM, warp_col = (warp % kWarpsN) * kWarpN;

  float acc[kTilesM][kTilesN][4];
#pragma unroll
  for (int i = 0; i < kTilesM; ++i)
#pragma unroll
    for (int j = 0; j < kTilesN; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.f;
  if constexpr (ALoad::kNormalises)
    RowStatistics(a_load.statistics, m, BM).for_one_tile<kThreads>(a, k, a_load.epsilon, row0, row_mean, row_inv_std);

  const int slices = static_cast<int>((k + BK - 1) / BK);
  // Fill all stages but one; every iteration then commits one group (empty past the end), so
  // waiting for all but kStages - 2 groups always means "the slice about to be used is in".
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < slices) load_slice(a_tiles + s * kAStage, b_tiles + s * kBStage, a, b, m, n, k, row0, col0, s * BK);
    kt::mma::commit_copies();
  }
  for (int slice = 0; slice < slices; ++slice) {
    kt::mma::wait_copies<kStages - 2>();
    __syncthreads();  // the slice is visible to all, and every warp is done with the stage refilled next
    const int next = slice + kStages - 1;
    if (next < slices)
      load_slice(a_tiles + next % kStages * kAStage, b_tiles + next % kStages * kBStage, a, b, m, n, k, row0, col0,
                 static_cast<long long>(next) * BK);
    kt::mma::commit_copies();

    if constexpr (ALoad::kNormalises) {
      T* slice_a = a_tiles + slice % kStages * kAStage;
      for (int i = threadIdx.x; i < BM * BK / 8; i += kThreads) {
        const int r = i / (BK / 8), c = i % (BK / 8) * 8;
        const long long col = static_cast<long long>(slice) * BK + c;
        if (row0 + r < m && col < k) a_load.apply_16_bytes(slice_a + r * kARow + c, row_mean[r], row_inv_std[r], col);
      }
      __syncthreads();
    }
    const T* a_stage = a_tiles + slice % kStages * kAStage;
    const T* b_stage = b_tiles + slice % kStages * kBStage;
#pragma unroll
    for (int kk = 0; kk < BK; kk += 16) {
      unsigned a_frag[kTilesM][4];
#pragma unroll
      for (int i = 0; i < kTilesM; ++i)  // rows lane % 16, k halves by lane / 16
        ldmatrix_x4(a_frag[i], a_stage + (warp_row + i * 16 + lane % 16) * kARow + kk + lane / 16 * 8);
#pragma unroll
      for (int j = 0; j < kTilesN; j += 2) {  // two n8 tiles per ldmatrix.x4: b0, b1 of each
        unsigned b_frag[4];
        if constexpr (kBIsNk) {
          // Lanes 0-7: n 0-7 at k 0; 8-15: n 0-7 at k 8; 16-23: n 8-15 at k 0; 24-31: n 8-15 at k 8.
          ldmatrix_x4(b_frag, b_stage + (warp_col + j * 8 + lane / 16 * 8 + lane % 8) * kBRow + kk + (lane / 8) % 2 * 8);
        } else {
          // The same four 8x8 blocks from the k-major slice, transposed while loading.
          ldmatrix_x4_trans(b_frag, b_stage + (kk + (lane / 8) % 2 * 8 + lane % 8) * kBRow + warp_col + j * 8 + lane / 16 * 8);
        }
#pragma unroll
        for (int i = 0; i < kTilesM; ++i) {
          mma_16816(acc[i][j], a_frag[i], b_frag[0], b_frag[1]);
          mma_16816(acc[i][j + 1], a_frag[i], b_frag[2], b_frag[3]);
        }
      }
    }
  }

  // Accumulator layout of m16n8: rows lane/4 and lane/4 + 8, columns 2 (lane % 4) and the next.
#pragma unroll
  for (int i = 0; i < kTilesM; ++i)
#pragma unroll
    for (int j = 0; j < kTilesN; ++j)
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const long long row = row0 + warp_row + i * 16 + lane / 4 + half * 8;
        const long long col = col0 + warp_col + j * 8 + lane % 4 * 2;
        if (row >= m) continue;
        store_pair<kEpi>(o.d, acc[i][j][half * 2], acc[i][j][half * 2 + 1], row, col, n, o.alpha, o.beta, o.c, o.bias);
      }
}

}  // namespace kt::gemm
