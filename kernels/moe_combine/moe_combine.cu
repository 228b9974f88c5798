// MoE combine on CUDA and HIP (kernels/moe_combine/moe_combine.hpp has the problem). Portable
// SIMT: any NVIDIA or AMD GPU, fp32/fp16/bf16.
//
// A block takes KT_TOKENS_PER_BLOCK tokens in turn; its threads split a token's row into accesses
// of KT_VECTOR_BYTES. For each of its slices a thread first issues the loads of all top_k expert
// rows (the rows of one token lie far apart in expert_out, so their latencies overlap), then adds
// them, weighted, in float, and stores the sum once. A dropped choice (row -1) loads nothing.
// top_k is compile-time (KT_DIM_TOP_K); tokens and hidden are read at run time.
#include "kernels/common/cuda_common.cuh"

namespace kt::combine {

using T = KT_T;
constexpr int K = KT_DIM_TOP_K, THREADS = KT_BLOCK_THREADS, TOKENS = KT_TOKENS_PER_BLOCK;
constexpr int VEC = KT_VECTOR_BYTES / int(sizeof(T));  // elements per access

// Elements [i, i + N) of token t's sum, N = VEC (whole accesses) or 1 (a width VEC does not divide).
template <int N>
__device__ __forceinline__ void combine_slice(const T* expert_out, const float (&weight)[K], const long long (&row)[K],
                                              T* y, long long hidden, long long t, long long i) {
  float part[K][N];
#pragma unroll
  for (int k = 0; k < K; ++k) {
    if (row[k] >= 0) {
      load_floats<T, N>(expert_out + row[k] * hidden + i, part[k]);
    } else {
#pragma unroll
      for (int e = 0; e < N; ++e) part[k][e] = 0.0f;
    }
  }
  float sum[N];
#pragma unroll
  for (int e = 0; e < N; ++e) {
    sum[e] = 0.0f;
#pragma unroll
    for (int k = 0; k < K; ++k) sum[e] = fmaf(weight[k], part[k][e], sum[e]);
  }
  store_floats<T, N>(y + t * hidden + i, sum);
}

}  // namespace kt::combine

extern "C" __global__ void __launch_bounds__(KT_BLOCK_THREADS)
moe_combine_kernel(const KT_T* __restrict__ expert_out, const float* __restrict__ weights, const int* __restrict__ rows,
                   KT_T* __restrict__ y, long long tokens, long long top_k, long long hidden) {
  using namespace kt::combine;
  (void)top_k;
  const bool whole = hidden % VEC == 0;
  for (int j = 0; j < TOKENS; ++j) {
    const long long t = (long long)blockIdx.x * TOKENS + j;
    if (t >= tokens) return;
    float weight[K];
    long long row[K];
#pragma unroll
    for (int k = 0; k < K; ++k) {
      row[k] = rows[t * K + k];
      weight[k] = row[k] >= 0 ? weights[t * K + k] : 0.0f;
    }
    if (whole) {
      for (long long i = (long long)threadIdx.x * VEC; i < hidden; i += (long long)THREADS * VEC)
        combine_slice<VEC>(expert_out, weight, row, y, hidden, t, i);
    } else {
      for (long long i = threadIdx.x; i < hidden; i += THREADS) combine_slice<1>(expert_out, weight, row, y, hidden, t, i);
    }
  }
}
