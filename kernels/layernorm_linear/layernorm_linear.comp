#version 450
#extension GL_GOOGLE_include_directive : require
#include "common/vulkan_common.glsl"
#extension GL_EXT_control_flow_attributes : require

// LayerNorm + Linear on Vulkan (kernels/layernorm_linear/layernorm_linear.hpp has the problem):
// y = LN(x)·Wᵀ + b, gemm's tiled path (kernels/gemm/gemm.comp) with x normalised as it is
// staged. A workgroup computes a KT_BLOCK_M x KT_BLOCK_N tile of y:
//   1. the statistics of its KT_BLOCK_M rows: each row shared by THREADS / KT_BLOCK_M (at least
//      one) invocations, sums around the row's first element (a mean far from zero costs no
//      precision), reduced in shared memory. Workgroups of one row of tiles take them again:
//      Vulkan gives no portable way for workgroups to wait for each other's results;
//   2. KT_BLOCK_K-deep slices of x (normalised) and W staged in shared memory as floats, a
//      KT_THREAD_M x KT_THREAD_N tile of sums per invocation, then the bias.
// Bounds-checked in m, n and k.

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;

layout(set = 0, binding = 0) restrict readonly buffer TensorX { KT_ELEM x[]; };
layout(set = 0, binding = 1) restrict readonly buffer TensorGamma { KT_ELEM gamma[]; };
layout(set = 0, binding = 2) restrict readonly buffer TensorBeta { KT_ELEM beta[]; };
layout(set = 0, binding = 3) restrict readonly buffer TensorW { KT_ELEM w[]; };
layout(set = 0, binding = 4) restrict readonly buffer TensorBias { KT_ELEM bias[]; };
layout(set = 0, binding = 5) restrict writeonly buffer TensorY { KT_ELEM y[]; };

layout(push_constant) uniform Dims { uint m, n, k; } dims;

layout(constant_id = 3) const uint KT_BLOCK_M = 64;
layout(constant_id = 4) const uint KT_BLOCK_N = 64;
layout(constant_id = 5) const uint KT_BLOCK_K = 16;
layout(constant_id = 8) const uint KT_THREAD_M = 4;
layout(constant_id = 9) const uint KT_THREAD_N = 4;

const float EPSILON = 1e-5;  // kLayerNormLinearEpsilon
const uint THREADS_M = KT_BLOCK_M / KT_THREAD_M, THREADS_N = KT_BLOCK_N / KT_THREAD_N;
const uint THREADS = THREADS_M * THREADS_N;
// Invocations per row while the statistics are taken, and rows at a time.
const uint ROW_LANES = THREADS >= KT_BLOCK_M ? THREADS / KT_BLOCK_M : 1;
const uint ROWS_AT_ONCE = THREADS / ROW_LANES;
const uint A_ROW = KT_BLOCK_M + 1, B_ROW = KT_BLOCK_N + 1;
shared float a_tile[KT_BLOCK_K * A_ROW];
shared float b_tile[KT_BLOCK_K * B_ROW];
shared float row_mean[KT_BLOCK_M], row_inv_std[KT_BLOCK_M];
shared float partial_sum[THREADS], partial_squares[THREADS];

void take_statistics(uint row0) {
  const uint tid = gl_LocalInvocationIndex;
  const uint lane = tid % ROW_LANES;
  for (uint first = 0; first < KT_BLOCK_M; first += ROWS_AT_ONCE) {
    const uint r = first + tid / ROW_LANES, row = row0 + r;
    float sum = 0.0, squares = 0.0, shift = 0.0;
    if (r < KT_BLOCK_M && row < dims.m) {
      shift = kt_load(x[row * dims.k]);
      for (uint col = lane; col < dims.k; col += ROW_LANES) {
        const float d = kt_load(x[row * dims.k + col]) - shift;
        sum += d;
        squares = fma(d, d, squares);
      }
    }
    partial_sum[tid] = sum;
    partial_squares[tid] = squares;
    barrier();
    if (lane == 0 && r < KT_BLOCK_M) {
      for (uint l = 1; l < ROW_LANES; ++l) {
        sum += partial_sum[tid + l];
        squares += partial_squares[tid + l];
      }
      const float shifted_mean = sum / float(dims.k);
      const bool exists = row < dims.m;
      row_mean[r] = exists ? shift + shifted_mean : 0.0;
      row_inv_std[r] = exists ? inversesqrt(max(squares / float(dims.k) - shifted_mean * shifted_mean, 0.0) + EPSILON) : 0.0;
    }
    barrier();
  }
}

// Slice [p0, p0 + BK) of the rows [row0, row0 + BM) of x, normalised, into a_tile; zeros past
// the edges.
void stage_x(uint row0, uint p0) {
  for (uint i = gl_LocalInvocationIndex; i < KT_BLOCK_M * KT_BLOCK_K; i += THREADS) {
    const uint r = i / KT_BLOCK_K, p = i % KT_BLOCK_K;
    const uint row = row0 + r, col = p0 + p;
    float v = 0.0;
    if (row < dims.m && col < dims.k)
      v = (kt_load(x[row * dims.k + col]) - row_mean[r]) * row_inv_std[r] * kt_load(gamma[col]) + kt_load(beta[col]);
    a_tile[p * A_ROW + r] = v;
  }
}

// Slice [p0, p0 + BK) of the rows [col0, col0 + BN) of W [n, k] into b_tile, read along k.
void stage_w(uint col0, uint p0) {
  for (uint i = gl_LocalInvocationIndex; i < KT_BLOCK_N * KT_BLOCK_K; i += THREADS) {
    const uint j = i / KT_BLOCK_K, p = i % KT_BLOCK_K;
    const uint col = col0 + j, depth = p0 + p;
    b_tile[p * B_ROW + j] = col < dims.n && depth < dims.k ? kt_load(w[col * dims.k + depth]) : 0.0;
  }
}

void main() {
  const uint row0 = gl_WorkGroupID.y * KT_BLOCK_M, col0 = gl_WorkGroupID.x * KT_BLOCK_N;
  const uint tx = gl_LocalInvocationIndex % THREADS_N, ty = gl_LocalInvocationIndex / THREADS_N;
  take_statistics(row0);

  float acc[KT_THREAD_M][KT_THREAD_N];
  [[unroll]] for (uint i = 0; i < KT_THREAD_M; ++i)
    [[unroll]] for (uint j = 0; j < KT_THREAD_N; ++j) acc[i][j] = 0.0;
  for (uint p0 = 0; p0 < dims.k; p0 += KT_BLOCK_K) {
    stage_x(row0, p0);
    stage_w(col0, p0);
    barrier();
    for (uint p = 0; p < KT_BLOCK_K; ++p) {
      float a_col[KT_THREAD_M], b_row[KT_THREAD_N];
      [[unroll]] for (uint i = 0; i < KT_THREAD_M; ++i) a_col[i] = a_tile[p * A_ROW + ty + i * THREADS_M];
      [[unroll]] for (uint j = 0; j < KT_THREAD_N; ++j) b_row[j] = b_tile[p * B_ROW + tx + j * THREADS_N];
      [[unroll]] for (uint i = 0; i < KT_THREAD_M; ++i)
        [[unroll]] for (uint j = 0; j < KT_THREAD_N; ++j) acc[i][j] = fma(a_col[i], b_row[j], acc[i][j]);
    }
    barrier();  // before the next slice overwrites the tiles
  }

  [[unroll]] for (uint i = 0; i < KT_THREAD_M; ++i) {
    const uint row = row0 + ty + i * THREADS_M;
    [[unroll]] for (uint j = 0; j < KT_THREAD_N; ++j) {
      const uint col = col0 + tx + j * THREADS_N;
      if (row < dims.m && col < dims.n) y[row * dims.n + col] = kt_store(acc[i][j] + kt_load(bias[col]));
    }
  }
}
