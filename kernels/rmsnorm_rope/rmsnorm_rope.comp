#version 450
#extension GL_GOOGLE_include_directive : require
#include "common/vulkan_common.glsl"
// RMSNorm per head + NeoX RoPE on Vulkan (QK-norm + rotary), arithmetic in float, eps = 1e-6.
// A group of THREADS_PER_HEAD consecutive invocations owns one (row, head) vector (a workgroup
// holds block_x / THREADS_PER_HEAD of them and strides over the rows * heads vectors, so any
// count fits the device's grid limit); the RoPE position of a vector is its row. With
// half = head_dim / 2, each invocation owns matching pairs: VECTOR (1 or 4) contiguous elements
// at offset j of the first half and the VECTOR at j + half, j = (item * THREADS_PER_HEAD + lane)
// * VECTOR, so the rotation needs no exchange between invocations:
//   y[d] = x[d] * inv_rms * weight[d]
//   out[j] = y[j] * cos[row, j] - y[j + half] * sin[row, j]
//   out[j + half] = y[j + half] * cos[row, j] + y[j] * sin[row, j]
// With ROW_CACHE the vector waits in registers between its read and its write; without it the
// second pass reads x again (any head_dim fits, at the cost of a cached re-read).
// Specialization constants (search_spaces/rmsnorm_rope.vulkan.json): KT_THREADS_PER_HEAD,
// KT_VECTOR, KT_ROW_CACHE; KT_DIM_HEADS and KT_DIM_HEAD_DIM (the item count is a constant).
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_KHR_shader_subgroup_shuffle : require

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(constant_id = 3) const uint KT_THREADS_PER_HEAD = 16;  // a power of two <= block_x
layout(constant_id = 4) const uint KT_VECTOR = 1;             // 4 only when half % 4 == 0
layout(constant_id = 5) const uint KT_ROW_CACHE = 1;
layout(constant_id = 6) const uint KT_DIM_HEADS = 32;
layout(constant_id = 7) const uint KT_DIM_HEAD_DIM = 128;     // even

// Scalar and 4-wide views of the same buffers: a 4-wide access is one 8- or 16-byte load.
layout(binding = 0) restrict readonly buffer X { KT_ELEM x[]; };
layout(binding = 0) restrict readonly buffer X4 { KT_ELEM4 x4[]; };
layout(binding = 1) restrict readonly buffer W { KT_ELEM weight[]; };
layout(binding = 1) restrict readonly buffer W4 { KT_ELEM4 weight4[]; };
layout(binding = 2) restrict readonly buffer C { KT_ELEM cos_table[]; };
layout(binding = 2) restrict readonly buffer C4 { KT_ELEM4 cos_table4[]; };
layout(binding = 3) restrict readonly buffer S { KT_ELEM sin_table[]; };
layout(binding = 3) restrict readonly buffer S4 { KT_ELEM4 sin_table4[]; };
layout(binding = 4) restrict writeonly buffer O { KT_ELEM out_[]; };
layout(binding = 4) restrict writeonly buffer O4 { KT_ELEM4 out4[]; };
layout(push_constant) uniform Dims { uint rows; uint heads; uint head_dim; };

const float kEpsilon = 1e-6;
const uint kHalf = KT_DIM_HEAD_DIM / 2;
const uint kStride = KT_THREADS_PER_HEAD * KT_VECTOR;  // elements between an invocation's items
const uint kItems = (kHalf + kStride - 1) / kStride;
const uint kCached = KT_ROW_CACHE != 0 ? kItems : 1;

// One partial sum per subgroup, for groups wider than a subgroup.
shared float partials[gl_WorkGroupSize.x];

// Sum of v over the invocations of this vector's group. Every invocation of the workgroup calls
// it (it may hold a barrier). Subgroups are runs of consecutive invocations, so a group narrower
// than a subgroup is an aligned part of one (reduced by butterfly shuffles), and a wider one is
// whole subgroups (reduced by subgroupAdd, then through shared memory).
float group_sum(float v) {
  if (KT_THREADS_PER_HEAD < gl_SubgroupSize) {
    [[unroll]] for (uint offset = 1; offset < KT_THREADS_PER_HEAD; offset <<= 1) v += subgroupShuffleXor(v, offset);
    return v;
  }
  v = subgroupAdd(v);
  if (KT_THREADS_PER_HEAD == gl_SubgroupSize) return v;
  barrier();  // the previous call's readers are done with partials
  if (subgroupElect()) partials[gl_SubgroupID] = v;
  barrier();
  const uint per_group = KT_THREADS_PER_HEAD / gl_SubgroupSize;
  const uint first = gl_LocalInvocationID.x / KT_THREADS_PER_HEAD * per_group;
  float total = 0.0;
  for (uint k = 0; k < per_group; ++k) total += partials[first + k];
  return total;
}

// KT_VECTOR elements from element `at` (the others 0).
vec4 load_x(uint at) {
  return KT_VECTOR == 4 ? kt_load4(x4[at / 4]) : vec4(kt_load(x[at]), 0.0, 0.0, 0.0);
}

// Normalises and rotates the pairs at j and j + half of the vector at `base` (a and b: their x).
void store_out(uint base, uint table, uint j, vec4 a, vec4 b, float inv_rms) {
  if (KT_VECTOR == 4) {
    a *= inv_rms * kt_load4(weight4[j / 4]);
    b *= inv_rms * kt_load4(weight4[(kHalf + j) / 4]);
    const vec4 c = kt_load4(cos_table4[(table + j) / 4]), s = kt_load4(sin_table4[(table + j) / 4]);
    out4[(base + j) / 4] = kt_store4(a * c - b * s);
    out4[(base + kHalf + j) / 4] = kt_store4(b * c + a * s);
  } else {
    const float y_lo = a.x * inv_rms * kt_load(weight[j]);
    const float y_hi = b.x * inv_rms * kt_load(weight[kHalf + j]);
    const float c = kt_load(cos_table[table + j]), s = kt_load(sin_table[table + j]);
    out_[base + j] = kt_store(y_lo * c - y_hi * s);
    out_[base + kHalf + j] = kt_store(y_hi * c + y_lo * s);
  }
}

void main() {
  const uint vectors_per_group = gl_WorkGroupSize.x / KT_THREADS_PER_HEAD;
  const uint lane = gl_LocalInvocationID.x % KT_THREADS_PER_HEAD;
  const uint slot = gl_LocalInvocationID.x / KT_THREADS_PER_HEAD;
  const uint vectors = rows * KT_DIM_HEADS;
  // The loop bound is the same for the whole workgroup (barriers in group_sum); invocations
  // past the last vector read nothing and still take part in the reductions.
  for (uint first_vector = gl_WorkGroupID.x * vectors_per_group; first_vector < vectors;
       first_vector += gl_NumWorkGroups.x * vectors_per_group) {
    const uint vector_index = first_vector + slot;
    const uint width = vector_index < vectors ? kHalf : 0;
    const uint base = vector_index * KT_DIM_HEAD_DIM;
    const uint table = vector_index / KT_DIM_HEADS * kHalf;  // the cos and sin of its row
    float sum_sq = 0.0;
    if (KT_ROW_CACHE != 0) {
      // Fully unrolled, so that the cached halves are registers, not indexed arrays.
      vec4 lo[kCached], hi[kCached];
      [[unroll]] for (uint i = 0; i < kItems; ++i) {
        const uint j = i * kStride + lane * KT_VECTOR;
        lo[i] = j < width ? load_x(base + j) : vec4(0.0);
        hi[i] = j < width ? load_x(base + kHalf + j) : vec4(0.0);
        sum_sq += dot(lo[i], lo[i]) + dot(hi[i], hi[i]);
      }
      const float inv_rms = inversesqrt(group_sum(sum_sq) / float(KT_DIM_HEAD_DIM) + kEpsilon);
      [[unroll]] for (uint i = 0; i < kItems; ++i) {
        const uint j = i * kStride + lane * KT_VECTOR;
        if (j < width) store_out(base, table, j, lo[i], hi[i], inv_rms);
      }
    } else {
      // Plain loops: the head may be far wider than anything worth unrolling.
      for (uint j = lane * KT_VECTOR; j < width; j += kStride) {
        const vec4 a = load_x(base + j), b = load_x(base + kHalf + j);
        sum_sq += dot(a, a) + dot(b, b);
      }
      const float inv_rms = inversesqrt(group_sum(sum_sq) / float(KT_DIM_HEAD_DIM) + kEpsilon);
      for (uint j = lane * KT_VECTOR; j < width; j += kStride)
        store_out(base, table, j, load_x(base + j), load_x(base + kHalf + j), inv_rms);
    }
  }
}
