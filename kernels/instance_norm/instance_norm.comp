#version 450
#extension GL_GOOGLE_include_directive : require
#include "common/vulkan_common.glsl"
// InstanceNorm on Vulkan: each (batch, channel) plane of height * width elements is a row,
// normalised as layernorm.comp normalises a row (two-pass statistics in float: the mean, then
// the sum of squared deviations from it; biased variance, eps = 1e-5), then scaled and shifted
// by its channel's gamma and beta. A group of THREADS_PER_ROW consecutive invocations owns one
// plane (a workgroup holds block_x / THREADS_PER_ROW of them and strides over the planes). Each
// invocation takes VECTOR (1 or 4) contiguous elements at a time, THREADS_PER_ROW * VECTOR apart.
// With ROW_CACHE the plane waits in registers between its read and its write; without it each
// pass reads it again (any plane size fits).
// Specialization constants (search_spaces/instance_norm.vulkan.json): KT_THREADS_PER_ROW,
// KT_VECTOR, KT_ROW_CACHE; KT_DIM_HEIGHT and KT_DIM_WIDTH (the per-invocation item count is a
// constant).
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_KHR_shader_subgroup_shuffle : require

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(constant_id = 3) const uint KT_THREADS_PER_ROW = 256;  // a power of two <= block_x
layout(constant_id = 4) const uint KT_VECTOR = 1;             // 4 only when height * width % 4 == 0
layout(constant_id = 5) const uint KT_ROW_CACHE = 1;
layout(constant_id = 6) const uint KT_DIM_HEIGHT = 64;
layout(constant_id = 7) const uint KT_DIM_WIDTH = 64;

layout(binding = 0) restrict readonly buffer X { KT_ELEM x[]; };
layout(binding = 0) restrict readonly buffer X4 { KT_ELEM4 x4[]; };
layout(binding = 1) restrict readonly buffer G { KT_ELEM gamma[]; };
layout(binding = 2) restrict readonly buffer B { KT_ELEM beta[]; };
layout(binding = 3) restrict writeonly buffer O { KT_ELEM out_[]; };
layout(binding = 3) restrict writeonly buffer O4 { KT_ELEM4 out4[]; };
layout(push_constant) uniform Dims { uint batch; uint channels; uint height; uint width; };

const float kEpsilon = 1e-5;
const uint kCols = KT_DIM_HEIGHT * KT_DIM_WIDTH;      // elements of a plane
const uint kStride = KT_THREADS_PER_ROW * KT_VECTOR;  // elements between an invocation's items
const uint kItems = (kCols + kStride - 1) / kStride;
const uint kCached = KT_ROW_CACHE != 0 ? kItems : 1;

#include "common/vulkan_rows.glsl"

// KT_VECTOR elements from element `at` (the others 0).
vec4 load_x(uint at) {
  return KT_VECTOR == 4 ? kt_load4(x4[at / 4]) : vec4(kt_load(x[at]), 0.0, 0.0, 0.0);
}

// v - mean on the KT_VECTOR lanes that are elements of the plane, 0 on the others (a select, not
// a multiply by a mask: see layernorm.comp).
vec4 centre(vec4 v, float mean) {
  return KT_VECTOR == 4 ? v - mean : vec4(v.x - mean, 0.0, 0.0, 0.0);
}

// The KT_VECTOR outputs from element `at`, from their centred values d.
void store_out(uint at, vec4 d, float scale, float shift) {
  if (KT_VECTOR == 4) {
    out4[at / 4] = kt_store4(d * scale + shift);
  } else {
    out_[at] = kt_store(d.x * scale + shift);
  }
}

void main() {
  const uint planes = batch * channels;
  const uint rows_per_group = gl_WorkGroupSize.x / KT_THREADS_PER_ROW;
  const uint lane = gl_LocalInvocationID.x % KT_THREADS_PER_ROW;
  const uint slot = gl_LocalInvocationID.x / KT_THREADS_PER_ROW;
  // The loop bound is the same for the whole workgroup (barriers in row_sum); invocations past
  // the last plane read nothing and still take part in the reductions.
  for (uint first_plane = gl_WorkGroupID.x * rows_per_group; first_plane < planes;
       first_plane += gl_NumWorkGroups.x * rows_per_group) {
    const uint plane = first_plane + slot;
    const uint size = plane < planes ? kCols : 0;
    const uint base = plane * kCols;
    const uint channel = plane < planes ? plane % channels : 0;
    float sum = 0.0, sum_sq = 0.0;
    if (KT_ROW_CACHE != 0) {
      vec4 cached[kCached];
      [[unroll]] for (uint i = 0; i < kItems; ++i) {
        const uint c = i * kStride + lane * KT_VECTOR;
        cached[i] = c < size ? load_x(base + c) : vec4(0.0);
        sum += dot(cached[i], vec4(1.0));
      }
      const float mean = row_sum(sum) / float(kCols);
      [[unroll]] for (uint i = 0; i < kItems; ++i) {
        const uint c = i * kStride + lane * KT_VECTOR;
        cached[i] = c < size ? centre(cached[i], mean) : vec4(0.0);
        sum_sq += dot(cached[i], cached[i]);
      }
      const float scale = inversesqrt(row_sum(sum_sq) / float(kCols) + kEpsilon) * kt_load(gamma[channel]);
      const float shift = kt_load(beta[channel]);
      [[unroll]] for (uint i = 0; i < kItems; ++i) {
        const uint c = i * kStride + lane * KT_VECTOR;
        if (c < size) store_out(base + c, cached[i], scale, shift);
      }
    } else {
      for (uint c = lane * KT_VECTOR; c < size; c += kStride) sum += dot(load_x(base + c), vec4(1.0));
      const float mean = row_sum(sum) / float(kCols);
      for (uint c = lane * KT_VECTOR; c < size; c += kStride) {
        const vec4 d = centre(load_x(base + c), mean);
        sum_sq += dot(d, d);
      }
      const float scale = inversesqrt(row_sum(sum_sq) / float(kCols) + kEpsilon) * kt_load(gamma[channel]);
      const float shift = kt_load(beta[channel]);
      for (uint c = lane * KT_VECTOR; c < size; c += kStride) store_out(base + c, load_x(base + c) - mean, scale, shift);
    }
  }
}
