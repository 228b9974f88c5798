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
// epilogues that need them).
struct Operands {
  const T* a;
  const T* b;
  const T* c;
  const T* bias;
  T* d;
  long long m, n, k;
  float alpha, beta;
};

// What happens to A's elements on their way into the GEMM: nothing (gemm), or a LayerNorm of
// each row (layernorm_linear): (a - mean[row]) * inv_std[row] * gamma[col] + beta[col], the row
// statistics taken first (each path says where and when).
struct PlainA {
  static constexpr bool kNormalises = false;
};
struct LayerNormA {
  static constexpr bool kNormalises = true;
  const T* gamma;
  const T* beta;
  float epsilon;
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

// Mean and inverse standard deviation of rows row0 .. row0 + ROWS - 1 of a [m, k], by groups of
// 32 consecutive threads (a row per group at a time; THREADS a multiple of 32), into mean[] and
// inv_std[] (ROWS each; zero for rows past m). Sums are taken around the row's first element, so
// a mean far from zero costs no precision in the variance.
template <int ROWS, int THREADS>
__device__ __forceinline__ void row_statistics(const T* a, long long row0, long long m, long long k, float epsilon,
                                               float* mean, float* inv_std) {
  static_assert(THREADS % 32 == 0, "groups of 32 threads");
  const int group = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  for (int r = group; r < ROWS; r += THREADS / 32) {
    const long long row = row0 + r;
    float sum = 0.f, squares = 0.f, shift = 0.f;
    if (row < m) {
      const T* x = a + row * k;
      shift = to_float(x[0]);
      for (long long col = lane; col < k; col += 32) {
        const float v = to_float(x[col]) - shift;
        sum += v;
        squares = fmaf(v, v, squares);
      }
    }
    sum = group_sum<32>(sum);
    squares = group_sum<32>(squares);
    if (lane == 0) {
      const float shifted_mean = sum / static_cast<float>(k);
      mean[r] = row < m ? shift + shifted_mean : 0.f;
      inv_std[r] = row < m ? rsqrtf(fmaxf(squares / static_cast<float>(k) - shifted_mean * shifted_mean, 0.f) + epsilon)
                           : 0.f;
    }
  }
}

// Same formulas as the reference (kernels/gemm/gemm.hpp), in float.
__device__ __forceinline__ float epilogue(float acc, float alpha, float beta, const T* c, const T* bias,
                                          long long row, long long col, long long n) {
  const float x = alpha * acc;
  if constexpr (kEpilogue == 1) return x + beta * to_float(c[row * n + col]);
  if constexpr (kEpilogue == 2) return x + to_float(bias[col]);
  if constexpr (kEpilogue == 3) {
    const float y = x + to_float(bias[col]);
    return 0.5f * y * (1.f + erff(y * 0.70710678118654752f));
  }
  if constexpr (kEpilogue == 4) {
    const float y = x + to_float(bias[col]);
    return y / (1.f + expf(-y));
  }
  if constexpr (kEpilogue == 5) return x + to_float(bias[col]) + beta * to_float(c[row * n + col]);
  return x;
}

// The epilogue of D[row, col] and D[row, col + 1] (the pair a tensor-core thread holds), stored
// as one aligned access when both exist and n is even, else element by element.
__device__ __forceinline__ void store_pair(T* d, float v0, float v1, long long row, long long col, long long n,
                                           float alpha, float beta, const T* c, const T* bias) {
  if (col + 1 < n && n % 2 == 0) {
    Packed<T, 2> pair;
    pair.elements.v[0] = from_float<T>(epilogue(v0, alpha, beta, c, bias, row, col, n));
    pair.elements.v[1] = from_float<T>(epilogue(v1, alpha, beta, c, bias, row, col + 1, n));
    *reinterpret_cast<decltype(pair.raw)*>(d + row * n + col) = pair.raw;
  } else {
    if (col < n) d[row * n + col] = from_float<T>(epilogue(v0, alpha, beta, c, bias, row, col, n));
    if (col + 1 < n) d[row * n + col + 1] = from_float<T>(epilogue(v1, alpha, beta, c, bias, row, col + 1, n));
  }
}

}  // namespace kt::gemm

