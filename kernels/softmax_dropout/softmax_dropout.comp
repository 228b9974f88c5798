#version 450
#extension GL_GOOGLE_include_directive : require
// [[unroll]]: loops over per-thread arrays must unroll, or the arrays live in local memory.
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#include "common/vulkan_common.glsl"

// Softmax + dropout on Vulkan: softmax as softmax.comp (its layout, row storage and reductions,
// repeated below), then each element is kept with probability 1 - P and scaled by
// 1 / (1 - P), or zeroed. The same math as softmax_dropout.cu.
//
// The mask is the family's, bit for bit (kernels/common/philox.hpp; the seed and offset of the
// call's rng tensor, P = 0.1 of softmax_dropout_constants.hpp): element i = row * cols + col
// takes 16 bits of Philox4x32-10 group i / 8 (half i % 2 of word (i % 8) / 2, low half first)
// and is kept iff u = bits * 2^-16 >= float(P), compared in float as the CUDA kernel's
// threshold is derived. An invocation draws the bits of each item just before storing it: one
// Philox call per item when VECTOR is 8 (cols % 8 == 0, so an item is exactly one group) or 4
// (an item is half a group), one per element when VECTOR is 1 (odd widths only: 8 times the
// generator's work, but correct at any shape). The linear index can pass 2^32, so it is kept
// as two 32-bit words (no 64-bit integers needed) and the 32x32->64-bit products of the
// rounds are umulExtended.
//
// Layout. A row belongs to THREADS_PER_ROW consecutive invocations of a workgroup (a power of
// two), so a workgroup of block_x invocations handles block_x / THREADS_PER_ROW rows at a time
// and walks the rows in a grid-stride loop (the grid is capped at max_grid_x by the space).
// Each invocation owns ITEMS vectors of VECTOR elements of its row: item i starts at column
// (i * THREADS_PER_ROW + lane) * VECTOR, so one item of neighbouring invocations is contiguous
// in memory (coalesced). VECTOR is 1, 4 (one KT_ELEM4) or 8 (two vec4 in fp32,
// one 16-byte uvec4 in fp16 and bf16); above 1 the space requires cols % VECTOR == 0, so a row starts
// on a vector boundary and a vector is either wholly in the row or wholly past its end.
//
// Row storage (REREAD). 0: the row stays in registers between its single read and its write
// (ITEMS * VECTOR floats per invocation, bounded by the space). 1: for rows too wide for
// registers, one pass computes the maximum and the sum together (online: the running sum is
// rescaled when the maximum grows) and a second pass reads the row again (mostly from L2) to
// write it.
//
// Reductions. A row of at most a subgroup reduces with shuffles (xor butterflies stay inside
// the row's aligned group of lanes); a wider row is whole subgroups: subgroupMax/Add, then one
// partial per subgroup through shared memory. This assumes subgroups are consecutive
// invocations of the workgroup (gl_SubgroupID = index / gl_SubgroupSize), as on every
// implementation ktune runs on, and block_x % subgroup_size == 0 (the space's constraint).
//
// exp(x - max) is computed as exp2(x * log2(e) - max * log2(e)): one fused multiply-add and the
// hardware's exp2. The rounding of max * log2(e) shifts every exponent of the row alike, so it
// cancels in the normalization.

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;

layout(constant_id = 3) const uint KT_THREADS_PER_ROW = 32;
layout(constant_id = 4) const uint KT_VECTOR = 1;
layout(constant_id = 5) const uint KT_REREAD = 0;
layout(constant_id = 6) const uint KT_DIM_COLS = 1;

layout(binding = 0) restrict readonly buffer X { KT_ELEM x[]; };
layout(binding = 0) restrict readonly buffer X4 { KT_ELEM4 x4[]; };
layout(binding = 1) restrict readonly buffer Rng { uint rng[]; };  // {seed, offset}
layout(binding = 2) restrict writeonly buffer Y { KT_ELEM y[]; };
layout(binding = 2) restrict writeonly buffer Y4 { KT_ELEM4 y4[]; };
#ifdef KT_PACKED_16BIT
layout(binding = 0) restrict readonly buffer X8 { uvec4 x8[]; };
layout(binding = 2) restrict writeonly buffer Y8 { uvec4 y8[]; };
#endif

layout(push_constant) uniform Dims {
  uint rows;
  uint cols;
} dims;

// Aliases are macros: a `const uint` copy of a specialization constant would rename it in the
// SPIR-V (one id, two OpNames), and the backend finds specialization constants by name.
#define T KT_THREADS_PER_ROW
#define VEC KT_VECTOR
const uint ITEMS = (KT_DIM_COLS + T * VEC - 1) / (T * VEC);
// The row's values in registers; a single unused float when the row is read twice.
const uint STORED = KT_REREAD == 0 ? ITEMS * VEC : 1;
const float LOG2E = 1.4426950408889634;
// The lowest float stands for "no element" (a true -inf would need inf arithmetic that fast
// math may not keep).
const float NEG_INF = -3.402823466e+38;

const float DROP_P = 0.1;
const float KEPT_SCALE = 1.1111111111111112;  // 1 / (1 - P), rounded once as in the CUDA kernel

// Philox4x32-10 of counter c under key k (philox.hpp): ten rounds, the key bumped between them.
uvec4 philox4x32_10(uvec4 c, uvec2 k) {
  for (int r = 0; r < 10; ++r) {
    uint hi0, lo0, hi1, lo1;
    umulExtended(0xD2511F53u, c.x, hi0, lo0);
    umulExtended(0xCD9E8D57u, c.z, hi1, lo1);
    c = uvec4(hi1 ^ c.y ^ k.x, lo1, hi0 ^ c.w ^ k.y, lo0);
    k += uvec2(0x9E3779B9u, 0xBB67AE85u);
  }
  return c;
}

// Applies dropout to the VEC elements of `item`, whose first element has linear index
// row * cols + col, and scales the kept ones by scale (1 / sum / (1 - P)).
void dropout(uint row, uint col, inout float item[8], float scale) {
  uint hi, lo, carry;
  umulExtended(row, KT_DIM_COLS, hi, lo);
  lo = uaddCarry(lo, col, carry);
  hi += carry;
  // Group g = i / 8 as (low, high) words; j = i % 8, the first element's place in the group.
  const uvec4 words = philox4x32_10(uvec4((lo >> 3) | (hi << 29), hi >> 3, rng[1], 0u), uvec2(rng[0], 0u));
  const uint j = lo & 7u;
  [[unroll]] for (uint v = 0; v < VEC; ++v) {
    // VEC 8 starts at j = 0, VEC 4 at j = 0 or 4: j + v stays inside the group.
    const uint e = j + v;
    const uint bits = (words[e >> 1] >> ((e & 1u) * 16u)) & 0xffffu;
    item[v] = float(bits) * 1.52587890625e-05 >= DROP_P ? item[v] * scale : 0.0;
  }
}

// One partial per subgroup (1024 invocations in subgroups of at least 4), two halves used in
// turn: a reduction's partials are then never overwritten by the next reduction before every
// invocation has read them, which saves the second barrier of each reduction.
shared float partials[2][256];

// The maximum (op 0) or sum (op 1) of v over the row's T invocations, in every one of them.
// Called in workgroup-uniform control flow (it may hold a barrier).
float row_reduce(float v, uint op) {
  if (T <= gl_SubgroupSize) {
    for (uint offset = T / 2; offset > 0; offset >>= 1) {
      const float other = subgroupShuffleXor(v, offset);
      v = op == 0 ? max(v, other) : v + other;
    }
    return v;
  }
  v = op == 0 ? subgroupMax(v) : subgroupAdd(v);
  if (subgroupElect()) partials[op][gl_SubgroupID] = v;
  memoryBarrierShared();
  barrier();
  const uint per_row = T / gl_SubgroupSize;
  const uint first = (gl_LocalInvocationID.x / T) * per_row;
  float r = partials[op][first];
  [[unroll]] for (uint k = 1; k < per_row; ++k) r = op == 0 ? max(r, partials[op][first + k]) : r + partials[op][first + k];
  return r;
}

// Element v of the vector item at column col of the row starting at element `start` (col is
// inside the row).
void load_item(uint start, uint col, out float item[8]) {
#ifdef KT_PACKED_16BIT
  if (VEC == 8) {  // one 16-byte load
    kt_unpack8(x8[(start + col) / 8], item);
    return;
  }
#endif
  if (VEC == 1) {
    item[0] = kt_load(x[start + col]);
  } else {
    [[unroll]] for (uint q = 0; q < VEC / 4; ++q) {
      const vec4 v = kt_load4(x4[(start + col) / 4 + q]);
      item[4 * q] = v.x;
      item[4 * q + 1] = v.y;
      item[4 * q + 2] = v.z;
      item[4 * q + 3] = v.w;
    }
  }
}

void store_item(uint start, uint col, float item[8]) {
#ifdef KT_PACKED_16BIT
  if (VEC == 8) {  // one 16-byte store
    y8[(start + col) / 8] = kt_pack8_bounded(item);  // softmax outputs: at most 1 / (1 - P)
    return;
  }
#endif
  if (VEC == 1) {
    y[start + col] = kt_store(item[0]);
  } else {
    [[unroll]] for (uint q = 0; q < VEC / 4; ++q)
      y4[(start + col) / 4 + q] = kt_store4(vec4(item[4 * q], item[4 * q + 1], item[4 * q + 2], item[4 * q + 3]));
  }
}

void main() {
  const uint rows_per_group = gl_WorkGroupSize.x / T;
  const uint lane = gl_LocalInvocationID.x % T;
  // Workgroup-uniform loop (the reductions hold barriers); rows past the end compute garbage
  // on row 0's data and store nothing.
  for (uint base = gl_WorkGroupID.x * rows_per_group; base < dims.rows; base += gl_NumWorkGroups.x * rows_per_group) {
    const uint row = base + gl_LocalInvocationID.x / T;
    const bool in_range = row < dims.rows;
    const uint start = (in_range ? row : 0) * KT_DIM_COLS;
    float item[8];

    if (KT_REREAD == 0) {
      float values[STORED];
      float m = NEG_INF;
      [[unroll]] for (uint i = 0; i < ITEMS; ++i) {
        const uint col = (i * T + lane) * VEC;
        if (col < KT_DIM_COLS) {
          load_item(start, col, item);
        } else {
          [[unroll]] for (uint v = 0; v < VEC; ++v) item[v] = NEG_INF;
        }
        [[unroll]] for (uint v = 0; v < VEC; ++v) {
          values[i * VEC + v] = item[v];
          m = max(m, item[v]);
        }
      }
      const float max_log2 = row_reduce(m, 0) * LOG2E;
      float sum = 0.0;
      [[unroll]] for (uint i = 0; i < ITEMS; ++i) {
        const bool present = (i * T + lane) * VEC < KT_DIM_COLS;
        [[unroll]] for (uint v = 0; v < VEC; ++v) {
          const float e = present ? exp2(fma(values[i * VEC + v], LOG2E, -max_log2)) : 0.0;
          values[i * VEC + v] = e;
          sum += e;
        }
      }
      const float scale = KEPT_SCALE / row_reduce(sum, 1);
      if (!in_range) continue;
      [[unroll]] for (uint i = 0; i < ITEMS; ++i) {
        const uint col = (i * T + lane) * VEC;
        if (col >= KT_DIM_COLS) break;
        [[unroll]] for (uint v = 0; v < VEC; ++v) item[v] = values[i * VEC + v];
        dropout(row, col, item, scale);
        store_item(start, col, item);
      }
    } else {
      // Online maximum and sum: sum is relative to m and rescaled when m grows.
      float m = NEG_INF, sum = 0.0;
      for (uint col = lane * VEC; col < KT_DIM_COLS; col += T * VEC) {
        load_item(start, col, item);
        float item_max = item[0];
        [[unroll]] for (uint v = 1; v < VEC; ++v) item_max = max(item_max, item[v]);
        const float new_max = max(m, item_max);
        const float new_max_log2 = new_max * LOG2E;
        sum = m == NEG_INF ? 0.0 : sum * exp2(fma(m, LOG2E, -new_max_log2));
        [[unroll]] for (uint v = 0; v < VEC; ++v) sum += exp2(fma(item[v], LOG2E, -new_max_log2));
        m = new_max;
      }
      const float row_max = row_reduce(m, 0);
      const float max_log2 = row_max * LOG2E;
      // An invocation that saw no element (m = -inf, sum = 0) adds nothing.
      const float scale = KEPT_SCALE / row_reduce(m == NEG_INF ? 0.0 : sum * exp2(fma(m, LOG2E, -max_log2)), 1);
      if (!in_range) continue;
      for (uint col = lane * VEC; col < KT_DIM_COLS; col += T * VEC) {
        load_item(start, col, item);
        [[unroll]] for (uint v = 0; v < VEC; ++v) item[v] = exp2(fma(item[v], LOG2E, -max_log2));
        dropout(row, col, item, scale);
        store_item(start, col, item);
      }
    }
  }
}
