// GEMM, portable path: a block computes a KT_BLOCK_M x KT_BLOCK_N tile of D, staging
// KT_BLOCK_K-deep slices of A and B in shared memory; each thread keeps a KT_THREAD_M x
// KT_THREAD_N tile of sums in registers. Rows and columns of a thread's tile are strided by the
// block's thread grid, so neighbouring threads read neighbouring shared-memory words.
// Every load is bounds-checked: any m, n, k.
#pragma once

namespace kt::gemm {

constexpr int BM = KT_BLOCK_M, BN = KT_BLOCK_N, BK = KT_BLOCK_K, TM = KT_THREAD_M, TN = KT_THREAD_N;
constexpr int kThreadsM = BM / TM, kThreadsN = BN / TN, kThreads = kThreadsM * kThreadsN;
static_assert(BM % TM == 0 && BN % TN == 0, "the block tile holds whole thread tiles");

}  // namespace kt::gemm

extern "C" __global__ void __launch_bounds__(kt::gemm::kThreads)
    gemm_kernel(const kt::gemm::T* __restrict__ a, const kt::gemm::T* __restrict__ b, const kt::gemm::T* __restrict__ c,
                const kt::gemm::T* __restrict__ bias, const kt::gemm::T* __restrict__ scalars, kt::gemm::T* __restrict__ d,
                long long m, long long n, long long k, long long, long long) {
  using namespace kt::gemm;
  // A slice stored k-major ([BK][BM]) so the inner loop reads a column of it as a row; one word of
  // padding per row keeps the transposing stores off a single bank.
  __shared__ float a_tile[BK][BM + 1];
  __shared__ float b_tile[BK][BN + 1];
  const long long tiles_n = (n + BN - 1) / BN;
  const long long row0 = (blockIdx.x / tiles_n) * BM, col0 = (blockIdx.x % tiles_n) * BN;
  const int tx = threadIdx.x % kThreadsN, ty = threadIdx.x / kThreadsN;

  float acc[TM][TN] = {};
  for (long long p0 = 0; p0 < k; p0 += BK) {
    // A is [m, k]: consecutive threads take consecutive p (coalesced along k).
    for (int i = threadIdx.x; i < BM * BK; i += kThreads) {
      const int r = i / BK, p = i % BK;
      const long long row = row0 + r, col = p0 + p;
      a_tile[p][r] = row < m && col < k ? kt::to_float(a[row * k + col]) : 0.f;
    }
    for (int i = threadIdx.x; i < BN * BK; i += kThreads) {
      // B [n, k]: consecutive threads along k; B [k, n]: along n. Either way coalesced.
      const int j = kBIsNk ? i / BK : i % BN, p = kBIsNk ? i % BK : i / BN;
      const long long col = col0 + j, depth = p0 + p;
      float value = 0.f;
      if (col < n && depth < k) value = kt::to_float(kBIsNk ? b[col * k + depth] : b[depth * n + col]);
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

  const float alpha = kt::to_float(scalars[0]), beta = kt::to_float(scalars[1]);
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const long long row = row0 + ty + i * kThreadsM;
    if (row >= m) continue;
#pragma unroll
    for (int j = 0; j < TN; ++j) {
      const long long col = col0 + tx + j * kThreadsN;
      if (col < n) d[row * n + col] = kt::from_float<T>(epilogue(acc[i][j], alpha, beta, c, bias, row, col, n));
    }
  }
}
