#version 450
#extension GL_GOOGLE_include_directive : require
#include "common/vulkan_common.glsl"

// split_heads on Vulkan (kernels/split_heads/split_heads.hpp has the problem): one invocation per
// RoPE pair (i, i + half) of one head vector, in qkv's order, so neighbouring invocations read
// neighbouring elements; a query or key pair is rotated, a value pair (or every pair when rope is
// 0) copied. Workgroups walk the pairs in a grid-stride loop (the grid is capped at max_grid_x,
// or at the max_workgroups tunable).

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;

layout(binding = 0) restrict readonly buffer Qkv { KT_ELEM qkv[]; };
layout(binding = 1) restrict readonly buffer Cos { KT_ELEM cos_table[]; };
layout(binding = 2) restrict readonly buffer Sin { KT_ELEM sin_table[]; };
layout(binding = 3) restrict writeonly buffer Q { KT_ELEM q[]; };
layout(binding = 4) restrict writeonly buffer K { KT_ELEM k[]; };
layout(binding = 5) restrict writeonly buffer V { KT_ELEM v[]; };

layout(push_constant) uniform Dims {
  uint batch, seq, heads, kv_heads, head_dim, rope;
} dims;

void main() {
  const uint kv_heads = dims.kv_heads == 0 ? dims.heads : dims.kv_heads;
  const uint slots = dims.heads + 2 * kv_heads, half_dim = dims.head_dim / 2;
  const uint pairs = dims.batch * dims.seq * slots * half_dim;
  for (uint p = gl_GlobalInvocationID.x; p < pairs; p += gl_NumWorkGroups.x * gl_WorkGroupSize.x) {
    const uint vector = p / half_dim, i = p - vector * half_dim;
    const uint token = vector / slots, slot = vector - token * slots;
    const uint b = token / dims.seq, s = token - b * dims.seq;
    const uint src = vector * dims.head_dim + i;
    const float lo = kt_load(qkv[src]), hi = kt_load(qkv[src + half_dim]);
    float out_lo = lo, out_hi = hi;
    if (dims.rope != 0 && slot < dims.heads + kv_heads) {
      const float c = kt_load(cos_table[s * half_dim + i]), n = kt_load(sin_table[s * half_dim + i]);
      out_lo = lo * c - hi * n;
      out_hi = hi * c + lo * n;
    }
    if (slot < dims.heads) {
      const uint dst = ((b * dims.heads + slot) * dims.seq + s) * dims.head_dim + i;
      q[dst] = kt_store(out_lo);
      q[dst + half_dim] = kt_store(out_hi);
    } else if (slot < dims.heads + kv_heads) {
      const uint dst = ((b * kv_heads + slot - dims.heads) * dims.seq + s) * dims.head_dim + i;
      k[dst] = kt_store(out_lo);
      k[dst + half_dim] = kt_store(out_hi);
    } else {
      const uint dst = ((b * kv_heads + slot - dims.heads - kv_heads) * dims.seq + s) * dims.head_dim + i;
      v[dst] = kt_store(out_lo);
      v[dst + half_dim] = kt_store(out_hi);
    }
  }
}
