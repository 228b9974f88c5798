#version 450
#extension GL_GOOGLE_include_directive : require
#include "common/vulkan_common.glsl"
// RMSNorm on Vulkan: y = x * inversesqrt(mean(x^2) + eps) * weight, eps = 1e-6, arithmetic in
// float. A group of THREADS_PER_ROW consecutive invocations owns one row (a workgroup holds
// block_x / THREADS_PER_ROW of them and strides over the rows, so any row count fits the
// device's grid limit). Each invocation takes VECTOR (1 or 4) contiguous elements at a time,
// THREADS_PER_ROW * VECTOR apart, so a row group's accesses are coalesced. With ROW_CACHE the
// row waits in registers between its read and its write (one read of x from memory); without
// it the second pass reads x again (any width fits, at the cost of a cached re-read).
// Specialization constants (search_spaces/rmsnorm.vulkan.json): KT_THREADS_PER_ROW, KT_VECTOR,
// KT_ROW_CACHE; KT_DIM_COLS (the per-invocation item count is a constant).
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_KHR_shader_subgroup_shuffle : require

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(constant_id = 3) const uint KT_THREADS_PER_ROW = 256;  // a power of two <= block_x
layout(constant_id = 4) const uint KT_VECTOR = 1;             // 4 only when cols % 4 == 0
layout(constant_id = 5) const uint KT_ROW_CACHE = 1;
layout(constant_id = 6) const uint KT_DIM_COLS = 4096;

// Scalar and 4-wide views of the same buffers: a 4-wide access is one 8- or 16-byte load.
layout(binding = 0) restrict readonly buffer X { KT_ELEM x[]; };
layout(binding = 0) restrict readonly buffer X4 { KT_ELEM4 x4[]; };
layout(binding = 1) restrict readonly buffer W { KT_ELEM weight[]; };
layout(binding = 1) restrict readonly buffer W4 { KT_ELEM4 weight4[]; };
layout(binding = 2) restrict writeonly buffer O { KT_ELEM out_[]; };
layout(binding = 2) restrict writeonly buffer O4 { KT_ELEM4 out4[]; };
layout(push_constant) uniform Dims { uint rows; uint cols; };

const float kEpsilon = 1e-6;
const uint kStride = KT_THREADS_PER_ROW * KT_VECTOR;  // elements between an invocation's items
const uint kItems = (KT_DIM_COLS + kStride - 1) / kStride;
const uint kCached = KT_ROW_CACHE != 0 ? kItems : 1;

#include "common/vulkan_rows.glsl"

// KT_VECTOR elements from element `at` (the others 0).
vec4 load_x(uint at) {
  return KT_VECTOR == 4 ? kt_load4(x4[at / 4]) : vec4(kt_load(x[at]), 0.0, 0.0, 0.0);
}

// The KT_VECTOR outputs from element c of the row at `base`.
void store_out(uint base, uint c, vec4 v, float inv_rms) {
  if (KT_VECTOR == 4) {
    out4[(base + c) / 4] = kt_store4(v * inv_rms * kt_load4(weight4[c / 4]));
  } else {
    out_[base + c] = kt_store(v.x * inv_rms * kt_load(weight[c]));
  }
}

void main() {
  const uint rows_per_group = gl_WorkGroupSize.x / KT_THREADS_PER_ROW;
  const uint lane = gl_LocalInvocationID.x % KT_THREADS_PER_ROW;
  const uint slot = gl_LocalInvocationID.x / KT_THREADS_PER_ROW;
  // The loop bound is the same for the whole workgroup (barriers in row_sum); invocations
  // past the last row read nothing and still take part in the reductions.
  for (uint first_row = gl_WorkGroupID.x * rows_per_group; first_row < rows;
       first_row += gl_NumWorkGroups.x * rows_per_group) {
    const uint row = first_row + slot;
    const uint width = row < rows ? KT_DIM_COLS : 0;
    const uint base = row * KT_DIM_COLS;
    float sum_sq = 0.0;
    if (KT_ROW_CACHE != 0) {
      // Fully unrolled, so that the cached row is registers, not an indexed array.
      vec4 cached[kCached];
      [[unroll]] for (uint i = 0; i < kItems; ++i) {
        const uint c = i * kStride + lane * KT_VECTOR;
        cached[i] = c < width ? load_x(base + c) : vec4(0.0);
        sum_sq += dot(cached[i], cached[i]);
      }
      const float inv_rms = inversesqrt(row_sum(sum_sq) / float(KT_DIM_COLS) + kEpsilon);
      [[unroll]] for (uint i = 0; i < kItems; ++i) {
        const uint c = i * kStride + lane * KT_VECTOR;
        if (c < width) store_out(base, c, cached[i], inv_rms);
      }
    } else {
      // A plain loop: the row may be far wider than anything worth unrolling.
      for (uint c = lane * KT_VECTOR; c < width; c += kStride) {
        const vec4 v = load_x(base + c);
        sum_sq += dot(v, v);
      }
      const float inv_rms = inversesqrt(row_sum(sum_sq) / float(KT_DIM_COLS) + kEpsilon);
      for (uint c = lane * KT_VECTOR; c < width; c += kStride) store_out(base, c, load_x(base + c), inv_rms);
    }
  }
}
