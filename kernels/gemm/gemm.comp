#version 450
#extension GL_GOOGLE_include_directive : require
#include "common/vulkan_common.glsl"
#extension GL_EXT_control_flow_attributes : require
#if defined(KT_PATH_COOPMAT)
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_NV_cooperative_matrix : require
#endif

// GEMM on Vulkan (kernels/gemm/gemm.hpp has the problem): D = epilogue(alpha * A·B, beta * C,
// bias), A [m, k], B [n, k] (b_layout 0) or [k, n] (b_layout 1), sums in fp32. The compile-time
// parameter "path" picks the code:
//   tiled   (default) - any device, precision, layout and shape: KT_BLOCK_M x KT_BLOCK_N tiles of D
//                       per workgroup, KT_BLOCK_K-deep slices of A and B staged in shared memory as
//                       floats, a KT_THREAD_M x KT_THREAD_N tile of sums per invocation;
//   coopmat           - fp16 on devices with VK_NV_cooperative_matrix (16x16x16, fp16 -> fp32) and
//                       32-wide subgroups, rows of A and B on 16-byte boundaries: KT_WARPS_M x
//                       KT_WARPS_N subgroups, each owning a grid of 16x16 accumulators; slices of A
//                       and B go global -> registers -> one or two shared-memory stages in 16-byte
//                       copies.
// Both are bounds-checked in m, n and k. Layout and epilogue are specialization constants
// (KT_DIM_*), so each pipeline carries only its own branch.

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;

layout(constant_id = 6) const uint KT_DIM_B_LAYOUT = 0;
layout(constant_id = 7) const uint KT_DIM_EPILOGUE = 0;

layout(set = 0, binding = 0) restrict readonly buffer TensorA { KT_ELEM a[]; };
layout(set = 0, binding = 1) restrict readonly buffer TensorB { KT_ELEM b[]; };
layout(set = 0, binding = 2) restrict readonly buffer TensorC { KT_ELEM c[]; };  // one element unless epilogue 1 or 5
layout(set = 0, binding = 3) restrict readonly buffer TensorBias { KT_ELEM bias[]; };
layout(set = 0, binding = 4) restrict readonly buffer TensorScalars { KT_ELEM scalars[]; };  // alpha, beta
layout(set = 0, binding = 5) restrict writeonly buffer TensorD { KT_ELEM d[]; };

layout(push_constant) uniform Dims { uint m, n, k, b_layout, epilogue; } dims;

// erf has no GLSL built-in: Abramowitz & Stegun 7.1.26 (absolute error below 1.5e-7, far under
// the fp32 tolerance of the GELU it feeds).
float kt_erf(float x) {
  const float t = 1.0 / (1.0 + 0.3275911 * abs(x));
  const float poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
  return sign(x) * (1.0 - poly * exp(-x * x));
}

// Same formulas as the reference (kernels/gemm/gemm.hpp), in float.
float epilogue(float acc, float alpha, float beta, uint row, uint col) {
  const float x = alpha * acc;
  if (KT_DIM_EPILOGUE == 0) return x;
  if (KT_DIM_EPILOGUE == 1) return x + beta * kt_load(c[row * dims.n + col]);
  const float y = x + kt_load(bias[col]);
  if (KT_DIM_EPILOGUE == 3) return 0.5 * y * (1.0 + kt_erf(y * 0.70710678118654752));
  if (KT_DIM_EPILOGUE == 4) return y / (1.0 + exp(-y));
  if (KT_DIM_EPILOGUE == 5) return y + beta * kt_load(c[row * dims.n + col]);
  return y;
}

#if !defined(KT_PATH_COOPMAT)
// ---------------------------------------------------------------------------------------------
// tiled: rows and columns of an invocation's tile are strided by the workgroup's invocation grid,
// so neighbouring invocations read neighbouring shared-memory words (no bank conflicts) and
// store neighbouring elements of D (coalesced).

layout(constant_id = 3) const uint KT_BLOCK_M = 64;
layout(constant_id = 4) const uint KT_BLOCK_N = 64;
layout(constant_id = 5) const uint KT_BLOCK_K = 16;
layout(constant_id = 8) const uint KT_THREAD_M = 4;
layout(constant_id = 9) const uint KT_THREAD_N = 4;

// Four elements in one load where rows are 4-aligned (the same buffers, viewed as vectors).
layout(set = 0, binding = 0) restrict readonly buffer TensorA4 { KT_ELEM4 a4[]; };
layout(set = 0, binding = 1) restrict readonly buffer TensorB4 { KT_ELEM4 b4[]; };

const uint THREADS_M = KT_BLOCK_M / KT_THREAD_M, THREADS_N = KT_BLOCK_N / KT_THREAD_N;
const uint THREADS = THREADS_M * THREADS_N;
// Slices stored k-major ([BK][BM], [BK][BN]) so the inner loop reads a row of each; one word of
// padding per row spreads the transposing stores of A over the banks.
const uint A_ROW = KT_BLOCK_M + 1, B_ROW = KT_BLOCK_N + 1;
shared float a_tile[KT_BLOCK_K * A_ROW];
shared float b_tile[KT_BLOCK_K * B_ROW];

// Slice [p0, p0 + BK) of the rows [row0, row0 + BM) of A into a_tile; zeros past the edges.
void stage_a(uint row0, uint p0) {
  const uint tid = gl_LocalInvocationIndex;
  if ((dims.k & 3u) == 0u) {  // rows 4-aligned: 4 consecutive k per invocation, one vector load
    for (uint i = tid; i < KT_BLOCK_M * KT_BLOCK_K / 4; i += THREADS) {
      const uint r = i / (KT_BLOCK_K / 4), p = i % (KT_BLOCK_K / 4) * 4;
      const uint row = row0 + r, depth = p0 + p;
      vec4 v = vec4(0.0);
      if (row < dims.m && depth < dims.k) v = kt_load4(a4[(row * dims.k + depth) / 4]);
      [[unroll]] for (uint q = 0; q < 4; ++q) a_tile[(p + q) * A_ROW + r] = v[q];
    }
  } else {  // consecutive invocations take consecutive k (coalesced)
    for (uint i = tid; i < KT_BLOCK_M * KT_BLOCK_K; i += THREADS) {
      const uint r = i / KT_BLOCK_K, p = i % KT_BLOCK_K;
      const uint row = row0 + r, depth = p0 + p;
      a_tile[p * A_ROW + r] = row < dims.m && depth < dims.k ? kt_load(a[row * dims.k + depth]) : 0.0;
    }
  }
}

// Slice [p0, p0 + BK) of the columns [col0, col0 + BN) of B into b_tile. B [n, k] is read along
// k like A; B [k, n] along n. Either way coalesced.
void stage_b(uint col0, uint p0) {
  const uint tid = gl_LocalInvocationIndex;
  if (KT_DIM_B_LAYOUT == 0) {
    if ((dims.k & 3u) == 0u) {
      for (uint i = tid; i < KT_BLOCK_N * KT_BLOCK_K / 4; i += THREADS) {
        const uint j = i / (KT_BLOCK_K / 4), p = i % (KT_BLOCK_K / 4) * 4;
        const uint col = col0 + j, depth = p0 + p;
        vec4 v = vec4(0.0);
        if (col < dims.n && depth < dims.k) v = kt_load4(b4[(col * dims.k + depth) / 4]);
        [[unroll]] for (uint q = 0; q < 4; ++q) b_tile[(p + q) * B_ROW + j] = v[q];
      }
    } else {
      for (uint i = tid; i < KT_BLOCK_N * KT_BLOCK_K; i += THREADS) {
        const uint j = i / KT_BLOCK_K, p = i % KT_BLOCK_K;
        const uint col = col0 + j, depth = p0 + p;
        b_tile[p * B_ROW + j] = col < dims.n && depth < dims.k ? kt_load(b[col * dims.k + depth]) : 0.0;
      }
    }
  } else {
    if ((dims.n & 3u) == 0u) {
      for (uint i = tid; i < KT_BLOCK_K * KT_BLOCK_N / 4; i += THREADS) {
        const uint p = i / (KT_BLOCK_N / 4), j = i % (KT_BLOCK_N / 4) * 4;
        const uint col = col0 + j, depth = p0 + p;
        vec4 v = vec4(0.0);
        if (col < dims.n && depth < dims.k) v = kt_load4(b4[(depth * dims.n + col) / 4]);
        [[unroll]] for (uint q = 0; q < 4; ++q) b_tile[p * B_ROW + j + q] = v[q];
      }
    } else {
      for (uint i = tid; i < KT_BLOCK_K * KT_BLOCK_N; i += THREADS) {
        const uint p = i / KT_BLOCK_N, j = i % KT_BLOCK_N;
        const uint col = col0 + j, depth = p0 + p;
        b_tile[p * B_ROW + j] = col < dims.n && depth < dims.k ? kt_load(b[depth * dims.n + col]) : 0.0;
      }
    }
  }
}

void main() {
  const uint row0 = gl_WorkGroupID.y * KT_BLOCK_M, col0 = gl_WorkGroupID.x * KT_BLOCK_N;
  const uint tx = gl_LocalInvocationIndex % THREADS_N, ty = gl_LocalInvocationIndex / THREADS_N;

  // Indexed only in short loops that compilers unroll fully, so the sums stay in registers.
  float acc[KT_THREAD_M][KT_THREAD_N];
  [[unroll]] for (uint i = 0; i < KT_THREAD_M; ++i)
    [[unroll]] for (uint j = 0; j < KT_THREAD_N; ++j) acc[i][j] = 0.0;
  for (uint p0 = 0; p0 < dims.k; p0 += KT_BLOCK_K) {
    stage_a(row0, p0);
    stage_b(col0, p0);
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

  const float alpha = kt_load(scalars[0]), beta = kt_load(scalars[1]);
  [[unroll]] for (uint i = 0; i < KT_THREAD_M; ++i) {
    const uint row = row0 + ty + i * THREADS_M;
    [[unroll]] for (uint j = 0; j < KT_THREAD_N; ++j) {
      const uint col = col0 + tx + j * THREADS_N;
      if (row < dims.m && col < dims.n) d[row * dims.n + col] = kt_store(epilogue(acc[i][j], alpha, beta, row, col));
    }
  }
}

#else
// ---------------------------------------------------------------------------------------------
// coopmat: the workgroup's BM x BN tile is split over KT_WARPS_M x KT_WARPS_N subgroups, each
// owning TILES_M x TILES_N 16x16 fp32 accumulators. While the subgroups multiply one shared
// stage of the (A, B) slices, the next slice is already loading into registers (16-byte loads).
// With KT_STAGES 2 it is then written to the other stage: one barrier per slice; KT_STAGES 1
// halves the shared memory (larger tiles fit in 48 KiB) for a second barrier per slice.
// Needs k % 8 == 0 (and n % 8 == 0 for B [k, n]) so that every 16-byte chunk is aligned and lies
// wholly inside or wholly outside the matrix (outside: zeros).

layout(constant_id = 3) const uint KT_BLOCK_M = 128;
layout(constant_id = 4) const uint KT_BLOCK_N = 128;
layout(constant_id = 5) const uint KT_BLOCK_K = 32;
layout(constant_id = 8) const uint KT_WARPS_M = 2;
layout(constant_id = 9) const uint KT_WARPS_N = 4;
layout(constant_id = 10) const uint KT_STAGES = 2;

// A and B as 16-byte chunks of 8 halves.
layout(set = 0, binding = 0) restrict readonly buffer TensorA16 { uvec4 a16[]; };
layout(set = 0, binding = 1) restrict readonly buffer TensorB16 { uvec4 b16[]; };

const uint THREADS = KT_WARPS_M * KT_WARPS_N * 32;  // subgroup size 32 (a space constraint)
const uint TILES_M = KT_BLOCK_M / (KT_WARPS_M * 16), TILES_N = KT_BLOCK_N / (KT_WARPS_N * 16);
// Shared rows padded by 16 bytes: the 8 rows of 16 bytes a fragment load reads at once fall in
// distinct banks. A stage: [BM][BK] (k contiguous); B stage: [BN][BK] for B [n, k] (read as a
// column-major K x N matrix), [BK][BN] for B [k, n]. Sizes and offsets in 16-byte chunks.
const uint A_ROW = (KT_BLOCK_K + 8) / 8;
const uint B_ROW = KT_DIM_B_LAYOUT == 0 ? A_ROW : (KT_BLOCK_N + 8) / 8;
const uint B_ROWS = KT_DIM_B_LAYOUT == 0 ? KT_BLOCK_N : KT_BLOCK_K;
const uint A_STAGE = KT_BLOCK_M * A_ROW, B_STAGE = B_ROWS * B_ROW;
shared uvec4 smem[KT_STAGES * (A_STAGE + B_STAGE)];  // the A stages, then the B stages

// The chunks of one slice each invocation copies (the space makes them divide evenly).
const uint A_CHUNKS = KT_BLOCK_M * KT_BLOCK_K / 8 / THREADS, B_CHUNKS = KT_BLOCK_N * KT_BLOCK_K / 8 / THREADS;
uvec4 a_regs[A_CHUNKS];
uvec4 b_regs[B_CHUNKS];

fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> acc[TILES_M][TILES_N];

// Global -> registers: slice [p0, p0 + BK) of the workgroup's rows of A and columns of B.
void fetch(uint row0, uint col0, uint p0) {
  const uint k8 = dims.k / 8, n8 = dims.n / 8;
  [[unroll]] for (uint t = 0; t < A_CHUNKS; ++t) {
    const uint i = gl_LocalInvocationIndex + t * THREADS;
    const uint row = row0 + i / (KT_BLOCK_K / 8), depth = p0 + i % (KT_BLOCK_K / 8) * 8;
    a_regs[t] = uvec4(0);
    if (row < dims.m && depth < dims.k) a_regs[t] = a16[row * k8 + depth / 8];
  }
  [[unroll]] for (uint t = 0; t < B_CHUNKS; ++t) {
    const uint i = gl_LocalInvocationIndex + t * THREADS;
    b_regs[t] = uvec4(0);
    if (KT_DIM_B_LAYOUT == 0) {
      const uint col = col0 + i / (KT_BLOCK_K / 8), depth = p0 + i % (KT_BLOCK_K / 8) * 8;
      if (col < dims.n && depth < dims.k) b_regs[t] = b16[col * k8 + depth / 8];
    } else {
      const uint depth = p0 + i / (KT_BLOCK_N / 8), col = col0 + i % (KT_BLOCK_N / 8) * 8;
      if (col < dims.n && depth < dims.k) b_regs[t] = b16[depth * n8 + col / 8];
    }
  }
}

// Registers -> shared stage `stage`, in the same chunk order as fetch().
void stash(uint stage) {
  [[unroll]] for (uint t = 0; t < A_CHUNKS; ++t) {
    const uint i = gl_LocalInvocationIndex + t * THREADS;
    smem[stage * A_STAGE + i / (KT_BLOCK_K / 8) * A_ROW + i % (KT_BLOCK_K / 8)] = a_regs[t];
  }
  const uint per_row = KT_DIM_B_LAYOUT == 0 ? KT_BLOCK_K / 8 : KT_BLOCK_N / 8;
  [[unroll]] for (uint t = 0; t < B_CHUNKS; ++t) {
    const uint i = gl_LocalInvocationIndex + t * THREADS;
    smem[KT_STAGES * A_STAGE + stage * B_STAGE + i / per_row * B_ROW + i % per_row] = b_regs[t];
  }
}

// The subgroup's accumulators += its rows of the A stage times its columns of the B stage.
// (Measured slower on the H100, reports/vulkan.md: loading the next k-step's fragments ahead,
// and the problem sizes as specialization constants with two slices per loop trip.)
void multiply(uint stage, uint warp_m, uint warp_n) {
  const uint a_base = stage * A_STAGE, b_base = KT_STAGES * A_STAGE + stage * B_STAGE;
  [[unroll]] for (uint kk = 0; kk < KT_BLOCK_K; kk += 16) {
    fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> a_frag[TILES_M];
    [[unroll]] for (uint i = 0; i < TILES_M; ++i)
      coopMatLoadNV(a_frag[i], smem, a_base + (warp_m * TILES_M + i) * 16 * A_ROW + kk / 8, A_ROW, false);
    [[unroll]] for (uint j = 0; j < TILES_N; ++j) {
      const uint col = (warp_n * TILES_N + j) * 16;
      fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> b_frag;
      if (KT_DIM_B_LAYOUT == 0)
        coopMatLoadNV(b_frag, smem, b_base + col * B_ROW + kk / 8, B_ROW, true);
      else
        coopMatLoadNV(b_frag, smem, b_base + kk * B_ROW + col / 8, B_ROW, false);
      [[unroll]] for (uint i = 0; i < TILES_M; ++i) acc[i][j] = coopMatMulAddNV(a_frag[i], b_frag, acc[i][j]);
    }
  }
}

void main() {
  const uint row0 = gl_WorkGroupID.y * KT_BLOCK_M, col0 = gl_WorkGroupID.x * KT_BLOCK_N;
  const uint warp_m = gl_SubgroupID / KT_WARPS_N, warp_n = gl_SubgroupID % KT_WARPS_N;

  [[unroll]] for (uint i = 0; i < TILES_M; ++i)
    [[unroll]] for (uint j = 0; j < TILES_N; ++j) acc[i][j] = fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>(0.0);

  fetch(row0, col0, 0);
  stash(0);
  barrier();
  uint stage = 0;
  for (uint p0 = 0; p0 < dims.k; p0 += KT_BLOCK_K) {
    const bool more = p0 + KT_BLOCK_K < dims.k;
    if (more) fetch(row0, col0, p0 + KT_BLOCK_K);  // in flight during the multiply
    multiply(stage, warp_m, warp_n);
    if (KT_STAGES == 2) {
      // The other stage was last read before the previous barrier: free to overwrite.
      if (more) stash(stage ^ 1u);
      barrier();
      stage ^= 1u;
    } else {
      barrier();  // everyone is done reading the one stage
      if (more) stash(0);
      barrier();
    }
  }

  // Epilogue: the stages are free now. Each subgroup stores one 16x16 accumulator at a time
  // (fp32) to its own 1280 bytes of shared memory and applies the epilogue element by element,
  // 16 consecutive invocations on the 16 columns of a row (32-byte stores). One fragment at a
  // time keeps the scratch small, so the stages alone bound the tile sizes.
  const uint row_chunks = 16 / 4 + 1;  // 16 floats, padded by 16 bytes
  const uint scratch = gl_SubgroupID * 16 * row_chunks;
  const float alpha = kt_load(scalars[0]), beta = kt_load(scalars[1]);
  [[unroll]] for (uint i = 0; i < TILES_M; ++i) {
    [[unroll]] for (uint j = 0; j < TILES_N; ++j) {
      coopMatStoreNV(acc[i][j], smem, scratch, row_chunks, false);
      subgroupMemoryBarrierShared();
      subgroupBarrier();
      const uint row_base = row0 + (warp_m * TILES_M + i) * 16, col_base = col0 + (warp_n * TILES_N + j) * 16;
      [[unroll]] for (uint e = gl_SubgroupInvocationID; e < 256; e += 32) {
        const uint r = e / 16, cc = e % 16;
        const uint row = row_base + r, col = col_base + cc;
        if (row < dims.m && col < dims.n) {
          const float v = uintBitsToFloat(smem[scratch + r * row_chunks + cc / 4][cc % 4]);
          d[row * dims.n + col] = kt_store(epilogue(v, alpha, beta, row, col));
        }
      }
      subgroupBarrier();  // all reads done before the next accumulator overwrites the scratch
    }
  }
}
#endif
