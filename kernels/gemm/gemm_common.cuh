// What every GEMM path shares (kernels/gemm/gemm.cu lists the paths): the operands, the
// epilogues, the optional normalisation of A's rows. The dims arrive as defines (KT_DIM_*):
// layout and epilogue are compile-time.
#pragma once

#include "kernels/common/cuda_common.cuh"

namespace kt::gemm {

using T = KT_T;
constexpr int kEpilogue = KT_DIM_EPILOGUE;
constexpr bool kBIsNk = KT_DIM_B_LAYOUT == 0;

// The operands of one launch, as every path takes them (c and bias are read only by the
// epilogues that need them). `tile` is the tile of D this block computes (the one-tile paths,
// simt and mma) or computes first (wgmma): blockIdx.x for gemm, a ticket for a kernel that
// orders its tiles itself (ffn). The wgmma path then takes every tile_step-th tile after it
// (gridDim.x on a persistent grid), or only that one when tile_step is 0.
struct Operands {
  const T* a;
  const T* b;
  const T* c;
  const T* bias;
  T* d;
  long long m, n, k;
  float alpha, beta;
  long long tile = 0;
  long long tile_step = 0;
  // Where the operands' first rows lie in the wgmma path's TMA views (grouped_gemm: a group's rows
  // of A, an expert's rows of B, in views over every group and expert); 0 for a plain GEMM.
  long long a_row0 = 0;
  long long b_row0 = 0;
};

// What happens to A's elements on their way into the GEMM: nothing (gemm), or a LayerNorm of
// each row (layernorm_linear): (a - mean[row]) * inv_std[row] * gamma[col] + beta[col], the row
// statistics taken first (RowStatistics, below).
//
// The wgmma path, whose A slices come by TMA from memory, has two more kinds of A, each a matrix
// the launch's own blocks write before the GEMM reads it, so its producer waits for a tile's rows
// before it loads them (wait_rows):
//   - NormalisedRowsA: LN(x) written once to the workspace by the row-statistics jobs
//     (layernorm_linear with normalise = written);
//   - ReadyRowsA: the hidden activation of ffn, counted in by the tiles of its first GEMM.
// kTakesStatistics: the block takes row-statistics jobs first (RowStatistics); kNormalises: the
// GEMM normalises A's slices itself; kWaitsForRows: the producer calls wait_rows(tile_m) first.
struct PlainA {
  static constexpr bool kTakesStatistics = false, kNormalises = false, kWaitsForRows = false;
  static constexpr float* statistics = nullptr;
  static constexpr T* normalised = nullptr;
  template <class Rows>
  __device__ __forceinline__ void wait_rows(const Rows&, long long) const {}
};
struct LayerNormA {
  static constexpr bool kTakesStatistics = true, kNormalises = true, kWaitsForRows = false;
  static constexpr T* normalised = nullptr;
  template <class Rows>
  __device__ __forceinline__ void wait_rows(const Rows&, long long) const {}
  const T* gamma;
  const T* beta;
  float epsilon;
  float* statistics;  // the workspace's words of RowStatistics
  __device__ __forceinline__ float apply(float x, float mean, float inv_std, long long col) const {
    return (x - mean) * inv_std * to_float(gamma[col]) + to_float(beta[col]);
  }
  // The 16 bytes of one row at p (columns col, col + 1, ...; col a multiple of 16 / sizeof(T)),
  // normalised in place: the tensor-core paths normalise the A slices they stage in shared memory.
  __device__ __forceinline__ void apply_16_bytes(T* p, float mean, float inv_std, long long col) const {
    constexpr int kVec = 16 / int(sizeof(T));
    float x[kVec], g[kVec], b[kVec];
    load_floats<T, kVec>(p, x);
    load_floats<T, kVec>(gamma + col, g);
    load_floats<T, kVec>(beta + col, b);
#pragma unroll
    for (int e = 0; e < kVec; ++e) x[e] = fmaf((x[e] - mean) * inv_std, g[e], b[e]);
    store_floats<T, kVec>(p, x);
  }
};

// Counters in the workspace through which the blocks of one launch order their work: tickets
// (the next job or tile: take() for the whole block, or an atomic add by the one thread that
// hands tiles out), a count per row of tiles (blocks wait until it reaches what they need), and
// the count of blocks done, by which the last block leaves every counter zeroed for the next
// launch (the backend zeroes the workspace once).
// Layout, in 4-byte words from `words`: [rows] the counts per row, [tickets] the tickets, the
// blocks done.
struct LaunchCounters {
  unsigned* per_row;
  long long rows;
  unsigned* ticket;  // the first ticket; ticket + i the others
  int tickets;
  unsigned* blocks_done;

  __device__ LaunchCounters(unsigned* words, long long row_count, int ticket_count = 1)
      : per_row(words), rows(row_count), ticket(words + row_count), tickets(ticket_count),
        blocks_done(words + row_count + ticket_count) {}

  // Every thread of the block calls it; all get the ticket thread 0 took.
  __device__ __forceinline__ unsigned take() const {
    __shared__ unsigned taken;
    if (threadIdx.x == 0) taken = atomicAdd(ticket, 1u);
    __syncthreads();
    const unsigned mine = taken;
    __syncthreads();  // every thread has read `taken` before the next take() changes it
    return mine;
  }
  // One thread, after a __threadfence() that makes what it counts visible.
  __device__ __forceinline__ void count(long long row, unsigned amount) const { atomicAdd(per_row + row, amount); }
  // One thread waits until row `row` has counted `target`.
  __device__ __forceinline__ void wait(long long row, unsigned target) const {
    while (*static_cast<volatile unsigned*>(per_row + row) < target) {
    }
    __threadfence();
  }
  // One thread per block, after the block's last wait(): the last block zeroes the counters.
  __device__ __forceinline__ void finish_block() const {
    __threadfence();
    const unsigned blocks = gridDim.x * gridDim.y * gridDim.z;
    if (atomicAdd(blocks_done, 1u) != blocks - 1) return;
    for (long long r = 0; r < rows; ++r) per_row[r] = 0;
    for (int i = 0; i < tickets; ++i) ticket[i] = 0;
    *blocks_done = 0;
    __threadfence();
  }
};

// The LayerNorm of A's rows takes each row's statistics once per launch, shared by every block
// through the workspace (each row is read by all n / BLOCK_N tile columns, so statistics taken
// per tile would read A that many times over):
//   - every block first takes jobs of kStatisticsJobRows rows (LaunchCounters tickets) until none
//     are left (no block waits while jobs remain, so this finishes whatever the grid's size: a
//     block that is not resident yet simply finds the jobs gone), writing mean and 1/std per row;
//   - a block then waits until the statistics of its tile's rows are all written (the count of
//     its BM-row block) and reads them.
// Layout, in 4-byte words from `words`: [2 m] mean and 1/std of each row, then the LaunchCounters
// of the ceil(m / BM) row blocks.
constexpr int kStatisticsJobRows = 8;

struct RowStatistics {
  float* stats;
  long long m;
  int block_m;
  LaunchCounters counters;

  __device__ RowStatistics(float* words, long long rows, int rows_per_block)
      : stats(words), m(rows), block_m(rows_per_block),
        counters(reinterpret_cast<unsigned*>(words + 2 * rows), (rows + rows_per_block - 1) / rows_per_block) {}

  // Every thread of the block (THREADS of them, a multiple of 32) takes jobs until none are left.
  // With `normalised` (NormalisedRowsA), each job also writes its rows of LN(a) there ([m, k]),
  // for the async proxy (TMA) of any block to read once they are counted.
  template <int THREADS>
  __device__ __forceinline__ void take_jobs(const T* a, long long k, float epsilon, const T* gamma = nullptr,
                                            const T* beta = nullptr, T* normalised = nullptr) const {
    const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
    for (;;) {
      const long long first = static_cast<long long>(counters.take()) * kStatisticsJobRows;
      if (first >= m) return;
      for (int r = warp; r < kStatisticsJobRows; r += THREADS / 32)
        if (first + r < m) {
          const float2 moments = row(a, first + r, k, epsilon, lane);
          if (normalised != nullptr) write_row(a, gamma, beta, normalised, first + r, k, moments, lane);
        }
      if (normalised != nullptr) fence_async_proxy_global();
      __threadfence();  // the statistics are visible before they are counted
      __syncthreads();
      const long long rows = min(static_cast<long long>(kStatisticsJobRows), m - first);
      if (threadIdx.x == 0) counters.count(first / block_m, static_cast<unsigned>(rows));
    }
  }

  // One thread waits until the statistics of row block `tile_m` (below m) are all written.
  __device__ __forceinline__ void wait(long long tile_m) const {
    counters.wait(tile_m, static_cast<unsigned>(min(static_cast<long long>(block_m), m - tile_m * block_m)));
  }

  // Mean and 1/std of one row by the 32 lanes of a warp (or half a wavefront), around the row's
  // first element so that a mean far from zero costs no precision in the variance; every lane
  // gets them (x and y), lane 0 writes them.
  __device__ __forceinline__ float2 row(const T* a, long long row, long long k, float epsilon, int lane) const {
    const T* x = a + row * k;
    const float shift = to_float(x[0]);
    float sum = 0.f, squares = 0.f;
    constexpr int kVec = 16 / int(sizeof(T));
    long long col = 0;
    if (k % kVec == 0) {  // 16-byte loads, eight in flight per lane
      for (; col + 8 * 32 * kVec <= k; col += 8 * 32 * kVec) {
        float v[8][kVec];
#pragma unroll
        for (int u = 0; u < 8; ++u) load_floats<T, kVec>(x + col + (u * 32 + lane) * kVec, v[u]);
#pragma unroll
        for (int u = 0; u < 8; ++u)
#pragma unroll
          for (int e = 0; e < kVec; ++e) {
            const float d = v[u][e] - shift;
            sum += d;
            squares = fmaf(d, d, squares);
          }
      }
    }
    for (col += lane; col < k; col += 32) {
      const float d = to_float(x[col]) - shift;
      sum += d;
      squares = fmaf(d, d, squares);
    }
    sum = group_sum<32>(sum);
    squares = group_sum<32>(squares);
    const float shifted_mean = sum / static_cast<float>(k);
    const float2 moments = make_float2(
        shift + shifted_mean, rsqrtf(fmaxf(squares / static_cast<float>(k) - shifted_mean * shifted_mean, 0.f) + epsilon));
    if (lane == 0) {
      stats[2 * row] = moments.x;
      stats[2 * row + 1] = moments.y;
    }
    return moments;
  }

  // LN(a[row]) into out[row] by the 32 lanes of the warp that has just taken the row's `moments`
  // (mean, 1/std); the row is still in L1.
  __device__ __forceinline__ void write_row(const T* a, const T* gamma, const T* beta, T* out, long long row,
                                            long long k, float2 moments, int lane) const {
    const float mu = moments.x, scale = moments.y;
    const T* x = a + row * k;
    T* y = out + row * k;
    constexpr int kVec = 16 / int(sizeof(T));
    long long col = 0;
    if (k % kVec == 0) {
      for (; col + 32 * kVec <= k; col += 32 * kVec) {
        const long long c = col + lane * kVec;
        float v[kVec], g[kVec], b[kVec];
        load_floats<T, kVec>(x + c, v);
        load_floats<T, kVec>(gamma + c, g);
        load_floats<T, kVec>(beta + c, b);
#pragma unroll
        for (int e = 0; e < kVec; ++e) v[e] = fmaf((v[e] - mu) * scale, g[e], b[e]);
        store_floats<T, kVec>(y + c, v);
      }
    }
    for (col += lane; col < k; col += 32)
      y[col] = from_float<T>(fmaf((to_float(x[col]) - mu) * scale, to_float(gamma[col]), to_float(beta[col])));
  }

  // Mean and 1/std of a row written by any block (read past the incoherent L1).
  __device__ __forceinline__ float mean(long long row) const { return static_cast<volatile float*>(stats)[2 * row]; }
  __device__ __forceinline__ float inv_std(long long row) const {
    return static_cast<volatile float*>(stats)[2 * row + 1];
  }

  // What a block of the one-tile paths (simt, mma) does first: its jobs, then its tile's rows
  // row0 .. row0 + block_m - 1 (row0 below m) into mean[] and inv_std[] (zero past m), and it
  // counts itself done.
  template <int THREADS>
  __device__ __forceinline__ void for_one_tile(const T* a, long long k, float epsilon, long long row0,
                                               float* tile_mean, float* tile_inv_std) const {
    take_jobs<THREADS>(a, k, epsilon);
    if (threadIdx.x == 0) wait(row0 / block_m);
    __syncthreads();
    for (int r = threadIdx.x; r < block_m; r += THREADS) {
      tile_mean[r] = row0 + r < m ? mean(row0 + r) : 0.f;
      tile_inv_std[r] = row0 + r < m ? inv_std(row0 + r) : 0.f;
    }
    if (threadIdx.x == 0) counters.finish_block();
    __syncthreads();
  }
};

// LN(x) written once by the launch's row-statistics jobs (to `normalised`, [m, k] in the
// workspace, whose TMA descriptor the GEMM loads A through), then read by the GEMM as a plain A.
struct NormalisedRowsA {
  static constexpr bool kTakesStatistics = true, kNormalises = false, kWaitsForRows = true;
  const T* gamma;
  const T* beta;
  float epsilon;
  float* statistics;  // the workspace's words of RowStatistics
  T* normalised;
  // The producer thread, before loading rows of tile row tile_m: they are written and counted,
  // and the async proxy (TMA) sees them.
  __device__ __forceinline__ void wait_rows(const RowStatistics& rows, long long tile_m) const {
    rows.wait(tile_m);
    fence_async_proxy_global();
  }
};

// An A that other tiles of the same launch write (ffn's hidden activation): tile row r is ready
// when counters.per_row[r] reaches `tiles_per_row`.
struct ReadyRowsA {
  static constexpr bool kTakesStatistics = false, kNormalises = false, kWaitsForRows = true;
  static constexpr float* statistics = nullptr;
  static constexpr T* normalised = nullptr;
  LaunchCounters counters;
  unsigned tiles_per_row;
  __device__ __forceinline__ void wait_rows(const RowStatistics&, long long tile_m) const {
    counters.wait(tile_m, tiles_per_row);
    fence_async_proxy_global();
  }
};

// Same formulas as the reference (kernels/gemm/gemm.hpp), in float. kEpi is the problem's
// epilogue unless a family that runs two GEMMs in one kernel picks each one's (ffn), and
// kBiasGeluTanh, which gemm's problem does not offer, is ffn's GELU with the tanh approximation.
constexpr int kBiasGeluTanh = 6;

// The epilogue of one element from the C and bias values it reads (loaded by the caller, so
// that a thread's loads can all be in flight before its first store).
template <int kEpi = kEpilogue>
__device__ __forceinline__ float epilogue_of(float acc, float alpha, float beta, float c_value, float bias_value) {
  const float x = alpha * acc;
  if constexpr (kEpi == 1) return x + beta * c_value;
  if constexpr (kEpi == 2) return x + bias_value;
  if constexpr (kEpi == 3) {
    const float y = x + bias_value;
    return 0.5f * y * erfcf(-y * 0.70710678118654752f);  // 1 + erf(z) as erfc(-z): no cancellation for y << 0
  }
  if constexpr (kEpi == 4) {
    const float y = x + bias_value;
    return y / (1.f + expf(-y));
  }
  if constexpr (kEpi == 5) return x + bias_value + beta * c_value;
  if constexpr (kEpi == kBiasGeluTanh) {
    const float y = x + bias_value;
    return 0.5f * y * (1.f + tanhf(0.79788456080286535588f * (y + 0.044715f * y * y * y)));
  }
  return x;
}

template <int kEpi>
constexpr bool kEpilogueReadsC = kEpi == 1 || kEpi == 5;
template <int kEpi>
constexpr bool kEpilogueReadsBias = kEpi >= 2 && kEpi != 1;

template <int kEpi = kEpilogue>
__device__ __forceinline__ float epilogue(float acc, float alpha, float beta, const T* c, const T* bias,
                                          long long row, long long col, long long n) {
  const float c_value = kEpilogueReadsC<kEpi> ? to_float(c[row * n + col]) : 0.f;
  const float bias_value = kEpilogueReadsBias<kEpi> ? to_float(bias[col]) : 0.f;
  return epilogue_of<kEpi>(acc, alpha, beta, c_value, bias_value);
}

// A pair of D's elements is stored as one aligned access when both exist and n is even.
__device__ __forceinline__ bool stored_as_pair(long long col, long long n) { return col + 1 < n && n % 2 == 0; }

// What the epilogue reads at D[row, col] and D[row, col + 1] (zero where it reads nothing or
// past n): C as one aligned access where D is stored as one, the bias element by element (it
// may start anywhere).
struct PairInputs {
  float c0 = 0.f, c1 = 0.f, bias0 = 0.f, bias1 = 0.f;
};

template <int kEpi = kEpilogue>
__device__ __forceinline__ PairInputs load_pair_inputs(const T* c, const T* bias, long long row, long long col,
                                                       long long n) {
  PairInputs in;
  if constexpr (kEpilogueReadsC<kEpi>) {
    if (stored_as_pair(col, n)) {
      Packed<T, 2> pair;
      pair.raw = *reinterpret_cast<const decltype(pair.raw)*>(c + row * n + col);
      in.c0 = to_float(pair.elements.v[0]);
      in.c1 = to_float(pair.elements.v[1]);
    } else {
      if (col < n) in.c0 = to_float(c[row * n + col]);
      if (col + 1 < n) in.c1 = to_float(c[row * n + col + 1]);
    }
  }
  if constexpr (kEpilogueReadsBias<kEpi>) {
    if (col < n) in.bias0 = to_float(bias[col]);
    if (col + 1 < n) in.bias1 = to_float(bias[col + 1]);
  }
  return in;
}

// Stores the epilogue of D[row, col] and D[row, col + 1] (the pair a tensor-core thread holds)
// from inputs already loaded.
template <int kEpi = kEpilogue>
__device__ __forceinline__ void store_pair_from(T* d, float v0, float v1, const PairInputs& in, long long row,
                                                long long col, long long n, float alpha, float beta) {
  const float e0 = epilogue_of<kEpi>(v0, alpha, beta, in.c0, in.bias0);
  const float e1 = epilogue_of<kEpi>(v1, alpha, beta, in.c1, in.bias1);
  if (stored_as_pair(col, n)) {
    Packed<T, 2> pair;
    pair.elements.v[0] = from_float<T>(e0);
    pair.elements.v[1] = from_float<T>(e1);
    *reinterpret_cast<decltype(pair.raw)*>(d + row * n + col) = pair.raw;
  } else {
    if (col < n) d[row * n + col] = from_float<T>(e0);
    if (col + 1 < n) d[row * n + col + 1] = from_float<T>(e1);
  }
}

template <int kEpi = kEpilogue>
__device__ __forceinline__ void store_pair(T* d, float v0, float v1, long long row, long long col, long long n,
                                           float alpha, float beta, const T* c, const T* bias) {
  store_pair_from<kEpi>(d, v0, v1, load_pair_inputs<kEpi>(c, bias, row, col, n), row, col, n, alpha, beta);
}

}  // namespace kt::gemm

