#version 450
#extension GL_GOOGLE_include_directive : require
// [[unroll]]: loops over per-thread arrays must unroll, or the arrays live in local memory.
#extension GL_EXT_control_flow_attributes : require
#include "common/vulkan_common.glsl"

// SwiGLU on Vulkan: out[r, c] = silu(x[r, c]) * x[r, cols + c], silu(g) = g / (1 + exp(-g)), in
// float, for x of [rows, 2 * cols] (gate half, then up half) and out of [rows, cols]. The same
// math as swiglu.cu; the loop and accesses are geglu.comp's too.
//
// The output is cut into groups of VECTOR adjacent elements (1, 4: one KT_ELEM4, or 8: two, or
// in fp16 and bf16 one 16-byte uvec4);
// above 1 the space requires cols % VECTOR == 0, so every row, and its up half, starts on a
// vector boundary and a group never straddles two rows. Each invocation handles ITEMS groups
// per pass, block_x apart, so an item of neighbouring invocations is contiguous (coalesced);
// all loads of a pass are issued before any arithmetic, so 2 * ITEMS vector loads per
// invocation are in flight at once. Workgroups walk the groups in a grid-stride loop: one pass
// when the grid covers the output, else a capped grid (max_grid_x on lavapipe, or the
// max_workgroups tunable). The row of a group is a division by a specialization constant
// (groups per row, from KT_DIM_COLS), which the driver turns into a multiply.
// Indices are 32-bit: the tensors stay below 2^32 elements.

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;

layout(constant_id = 3) const uint KT_VECTOR = 1;
layout(constant_id = 4) const uint KT_ITEMS = 1;
layout(constant_id = 5) const uint KT_DIM_COLS = 1;

layout(binding = 0) restrict readonly buffer X { KT_ELEM x[]; };
layout(binding = 0) restrict readonly buffer X4 { KT_ELEM4 x4[]; };
layout(binding = 1) restrict writeonly buffer Y { KT_ELEM y[]; };
layout(binding = 1) restrict writeonly buffer Y4 { KT_ELEM4 y4[]; };
#ifdef KT_PACKED_16BIT
layout(binding = 0) restrict readonly buffer X8 { uvec4 x8[]; };
layout(binding = 1) restrict writeonly buffer Y8 { uvec4 y8[]; };
#endif

layout(push_constant) uniform Dims {
  uint rows;
  uint cols;
} dims;

// An alias as a macro: a `const uint` copy of a specialization constant would rename it in the
// SPIR-V (one id, two OpNames), and the backend finds specialization constants by name.
#define VEC KT_VECTOR
const uint GROUPS_PER_ROW = KT_DIM_COLS / VEC;

float act(float g) {
  // g below about -88: exp(-g) = inf, g / inf = -0, as silu rounds to.
  return g / (1.0 + exp(-g));
}

// The VEC floats at element index i of x (a multiple of VEC).
void load_vec(uint i, out float v[8]) {
#ifdef KT_PACKED_16BIT
  if (VEC == 8) {  // one 16-byte load
    kt_unpack8(x8[i / 8], v);
    return;
  }
#endif
  if (VEC == 1) {
    v[0] = kt_load(x[i]);
  } else {
    [[unroll]] for (uint q = 0; q < VEC / 4; ++q) {
      const vec4 w = kt_load4(x4[i / 4 + q]);
      v[4 * q] = w.x;
      v[4 * q + 1] = w.y;
      v[4 * q + 2] = w.z;
      v[4 * q + 3] = w.w;
    }
  }
}

void main() {
  const uint groups = dims.rows * GROUPS_PER_ROW;
  const uint per_pass = gl_NumWorkGroups.x * gl_WorkGroupSize.x * KT_ITEMS;
  for (uint base = gl_WorkGroupID.x * gl_WorkGroupSize.x * KT_ITEMS + gl_LocalInvocationID.x; base < groups;
       base += per_pass) {
    float gate[KT_ITEMS][8], up[KT_ITEMS][8];
    [[unroll]] for (uint item = 0; item < KT_ITEMS; ++item) {
      const uint group = base + item * gl_WorkGroupSize.x;
      if (group >= groups) break;
      const uint row = group / GROUPS_PER_ROW;
      const uint in_start = row * 2 * KT_DIM_COLS + (group - row * GROUPS_PER_ROW) * VEC;
      load_vec(in_start, gate[item]);
      load_vec(in_start + KT_DIM_COLS, up[item]);
    }
    [[unroll]] for (uint item = 0; item < KT_ITEMS; ++item) {
      const uint group = base + item * gl_WorkGroupSize.x;
      if (group >= groups) break;
      float o[8];
      [[unroll]] for (uint v = 0; v < VEC; ++v) o[v] = act(gate[item][v]) * up[item][v];
      // Output groups are contiguous: group * VEC is the first output element.
      if (VEC == 1) {
        y[group] = kt_store(o[0]);
#ifdef KT_PACKED_16BIT
      } else if (VEC == 8) {  // one 16-byte store
        y8[group] = kt_pack8(o);
#endif
      } else {
        [[unroll]] for (uint q = 0; q < VEC / 4; ++q)
          y4[group * (VEC / 4) + q] = kt_store4(vec4(o[4 * q], o[4 * q + 1], o[4 * q + 2], o[4 * q + 3]));
      }
    }
  }
}
