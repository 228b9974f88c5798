#version 450
#extension GL_GOOGLE_include_directive : require
#include "common/vulkan_common.glsl"
// Residual add + LayerNorm on Vulkan: s = x + residual in float, written rounded to `sum` beside
// the output (after every load of the row); LayerNorm then normalises the unrounded s (as residual_layernorm.hpp defines):
// y = (s - mean) * inversesqrt(var + eps) * gamma + beta, biased variance, eps = 1e-5. The
// statistics are two-pass (the mean, then the sum of squared deviations from it); the LayerNorm
// part is layernorm.comp's. A group of THREADS_PER_ROW consecutive invocations owns one row (a
// workgroup holds block_x / THREADS_PER_ROW of them and strides over the rows, so any row count
// fits the device's grid limit). Each invocation takes VECTOR (1 or 4) contiguous elements at a
// time, THREADS_PER_ROW * VECTOR apart, so accesses are coalesced. With ROW_CACHE the row of s
// waits in registers between its read and its write (x and residual read from memory once);
// without it each pass reads and adds them again (any width fits, at the cost of cached
// re-reads).
// Specialization constants (search_spaces/residual_layernorm.vulkan.json): KT_THREADS_PER_ROW,
// KT_VECTOR, KT_ROW_CACHE; KT_DIM_COLS (the per-invocation item count is a constant).
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
layout(binding = 1) restrict readonly buffer R { KT_ELEM residual[]; };
layout(binding = 1) restrict readonly buffer R4 { KT_ELEM4 residual4[]; };
layout(binding = 2) restrict readonly buffer G { KT_ELEM gamma[]; };
layout(binding = 2) restrict readonly buffer G4 { KT_ELEM4 gamma4[]; };
layout(binding = 3) restrict readonly buffer B { KT_ELEM beta[]; };
layout(binding = 3) restrict readonly buffer B4 { KT_ELEM4 beta4[]; };
layout(binding = 4) restrict writeonly buffer O { KT_ELEM out_[]; };
layout(binding = 4) restrict writeonly buffer O4 { KT_ELEM4 out4[]; };
layout(binding = 5) restrict writeonly buffer S { KT_ELEM sum_out[]; };
layout(binding = 5) restrict writeonly buffer S4 { KT_ELEM4 sum_out4[]; };
layout(push_constant) uniform Dims { uint rows; uint cols; };

const float kEpsilon = 1e-5;
const uint kStride = KT_THREADS_PER_ROW * KT_VECTOR;  // elements between an invocation's items
const uint kItems = (KT_DIM_COLS + kStride - 1) / kStride;
const uint kCached = KT_ROW_CACHE != 0 ? kItems : 1;

#include "common/vulkan_rows.glsl"

// KT_VECTOR elements of s = x + residual from element `at` (the others 0).
vec4 load_x(uint at) {
  return KT_VECTOR == 4 ? kt_load4(x4[at / 4]) + kt_load4(residual4[at / 4])
                        : vec4(kt_load(x[at]) + kt_load(residual[at]), 0.0, 0.0, 0.0);
}

// v - mean on the KT_VECTOR lanes that are elements of the row, 0 on the others. (Not a
// multiply by a constant mask: Mesa 22's lavapipe gets a specialization-constant select of
// vectors wrong.)
vec4 centre(vec4 v, float mean) {
  return KT_VECTOR == 4 ? v - mean : vec4(v.x - mean, 0.0, 0.0, 0.0);
}

// The KT_VECTOR outputs from element c of the row at `base`, from its centred values d.
void store_out(uint base, uint c, vec4 d, float inv_std) {
  if (KT_VECTOR == 4) {
    out4[(base + c) / 4] = kt_store4(d * inv_std * kt_load4(gamma4[c / 4]) + kt_load4(beta4[c / 4]));
  } else {
    out_[base + c] = kt_store(d.x * inv_std * kt_load(gamma[c]) + kt_load(beta[c]));
  }
}

// The KT_VECTOR elements of s from element `at`, rounded to the sum output.
void store_sum(uint at, vec4 v) {
  if (KT_VECTOR == 4) {
    sum_out4[at / 4] = kt_store4(v);
  } else {
    sum_out[at] = kt_store(v.x);
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
    float sum = 0.0, sum_sq = 0.0;
    if (KT_ROW_CACHE != 0) {
      // Fully unrolled, so that the cached row is registers, not an indexed array. Every load
      // of the row comes before its first store (the sum x + residual is stored with the
      // output), so the loads are all in flight at once. Items past the end stay 0 and out of
      // the variance.
      vec4 cached[kCached];
      [[unroll]] for (uint i = 0; i < kItems; ++i) {
        const uint c = i * kStride + lane * KT_VECTOR;
        cached[i] = c < width ? load_x(base + c) : vec4(0.0);
        sum += dot(cached[i], vec4(1.0));
      }
      const float mean = row_sum(sum) / float(KT_DIM_COLS);
      [[unroll]] for (uint i = 0; i < kItems; ++i) {
        const uint c = i * kStride + lane * KT_VECTOR;
        const vec4 d = c < width ? centre(cached[i], mean) : vec4(0.0);
        sum_sq += dot(d, d);
      }
      const float inv_std = inversesqrt(row_sum(sum_sq) / float(KT_DIM_COLS) + kEpsilon);
      [[unroll]] for (uint i = 0; i < kItems; ++i) {
        const uint c = i * kStride + lane * KT_VECTOR;
        if (c < width) {
          store_sum(base + c, cached[i]);
          store_out(base, c, centre(cached[i], mean), inv_std);
        }
      }
    } else {
      // Plain loops: the row may be far wider than anything worth unrolling. The sum
      // x + residual is stored in the last pass, so the first two only load.
      for (uint c = lane * KT_VECTOR; c < width; c += kStride) sum += dot(load_x(base + c), vec4(1.0));
      const float mean = row_sum(sum) / float(KT_DIM_COLS);
      for (uint c = lane * KT_VECTOR; c < width; c += kStride) {
        const vec4 d = centre(load_x(base + c), mean);
        sum_sq += dot(d, d);
      }
      const float inv_std = inversesqrt(row_sum(sum_sq) / float(KT_DIM_COLS) + kEpsilon);
      for (uint c = lane * KT_VECTOR; c < width; c += kStride) {
        const vec4 v = load_x(base + c);
        store_sum(base + c, v);
        store_out(base, c, centre(v, mean), inv_std);
      }
    }
  }
}
