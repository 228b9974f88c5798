// GEMM, portable path: a block computes a KT_BLOCK_M x KT_BLOCK_N tile of D, staging
// KT_BLOCK_K-deep slices of A and B in shared memory; each thread keeps a KT_THREAD_M x
// KT_THREAD_N tile of sums in registers. Rows and columns of a thread's tile are strided by the
// block's thread grid, so neighbouring threads read neighbouring shared-memory words.
// Every load is bounds-checked: any m, n, k. With a LayerNorm of A (layernorm_linear) the block
// first takes its share of the row statistics and reads its rows' (RowStatistics), then
// normalises each element of A as it stages it.
#pragma once

namespace kt::gemm {

constexpr int BM = KT_BLOCK_M, BN = KT_BLOCK_N, BK = KT_BLOCK_K, TM = KT_THREAD_M, TN = KT_THREAD_N;
constexpr int kThreadsM = BM / TM, kThreadsN = BN / TN, kThreads = kThreadsM * kThreadsN;
static_assert(BM % TM == 0 && BN % TN == 0, "the block tile holds whole thread tiles");

// The staged slices: A stored k-major ([BK][BM]) so the inner loop reads a column of it as a
// row; one word of padding per row keeps the transposing stores off a single bank. Declared
// once, outside the templates, so that a kernel running two GEMMs (ffn) holds them once.
struct SimtTiles {
  float a[BK][BM + 1];
  float b[BK][BN + 1];
};
__device__ __forceinline__ SimtTiles& simt_tiles() {
  __shared__ SimtTiles tiles;
  return tiles;
}

template <class ALoad, int kEpi = kEpilogue>
__device__ __forceinline__ void simt_gemm(const Operands& o, const ALoad& a_load) {
  const T* __restrict__ a = o.a;
  const T* __restrict__ b = o.b;
  const long long m = o.m, n = o.n, k = o.k;
  __shared__ float row_mean[ALoad::kNormalises ? BM : 1], row_inv_std[ALoad::kNormalises ? BM : 1];
  auto& a_tile = simt_tiles().a;
  auto& b_tile = simt_tiles().b;
  const long long tiles_n = (n + BN - 1) / BN;
  const long long row0 = (o.tile / tiles_n) * BM, col0 = (o.tile % tiles_n) * BN;
  const int tx = threadIdx.x % kThreadsN, ty = threadIdx.x / kThreadsN;

  if constexpr (ALoad::kNormalises)
    RowStatistics(a_load.statistics, m, BM).for_one_tile<kThreads>(a, k, a_load.epsilon, row0, row_mean, row_inv_std);

  float acc[TM][TN] = {};
  for (long long p0 = 0; p0 < k; p0 += BK) {
    // A is [m, k]: consecutive threads take consecutive p (coalesced along k).
    for (int i = threadIdx.x; i < BM * BK; i += kThreads) {
      const int r = i / BK, p = i % BK;
      const long long row = row0 + r, col = p0 + p;
      float value = 0.f;
      if (row < m && col < k) {
        value = to_float(a[row * k + col]);
        if constexpr (ALoad::kNormalises) value = a_load.apply(value, row_mean[r], row_inv_std[r], col);
      }
      a_tile[p][r] = value;
    }
    for (int i = threadIdx.x; i < BN * BK; i += kThreads) {
      // B [n, k]: consecutive threads along k; B [k, n]: along n. Either way coalesced.
      const int j = kBIsNk ? i / BK : i % BN, p = kBIsNk ? i % BK : i / BN;
      const long long col = col0 + j, depth = p0 + p;
      float value = 0.f;
      if (col < n && depth < k) value = to_float(kBIsNk ? b[col * k + depth] : b[depth * n + col]);
      b_tile[p][j] = value;
    }
    __syncthreads();
#pragma unroll 4
    for (int p = 0; p < BK; ++p) {
      float a_col[TM], b_row[TN];
#pragma unroll
      for (int i = 0; i < TM; ++i) a_col[i] = a_tile[p][ty + i * kThreadsM];
#pragma unroll
      for (int j = 0; j < TN; ++j) b_row[j] = b_tile[p][tx + j * kThreadsN];
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a_col[i], b_row[j], acc[i][j]);
    }
    __syncthreads();
  }

#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const long long row = row0 + ty + i * kThreadsM;
    if (row >= m) continue;
#pragma unroll
    for (int j = 0; j < TN; ++j) {
      const long long col = col0 + tx + j * kThreadsN;
      if (col < n) o.d[row * n + col] = from_float<T>(epilogue<kEpi>(acc[i][j], o.alpha, o.beta, o.c, o.bias, row, col, n));
    }
  }
}

}  // namespace kt::gemm
