#version 450
#extension GL_GOOGLE_include_directive : require
#include "common/vulkan_common.glsl"

// Copy on Vulkan: out[i] = x[i], moved as raw VECTOR_BYTES-wide words (uint, uvec2 or uvec4
// views of the same buffers: no conversion), ITEMS words per invocation per pass, all loaded
// before any is stored, block_x words apart so neighbouring invocations touch neighbouring words
// (coalesced). Workgroups walk the words in a grid-stride loop: n reaches 2^26 elements, past
// the 65535 workgroups per dimension of many devices, so the grid is capped (max_grid_x, or
// the max_workgroups tunable) and loops. The tail that does not fill a whole word (at most
// VECTOR_BYTES / element size - 1 elements) is copied element by element by the first
// invocations. The same scheme as copy.cu.

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;

layout(constant_id = 3) const uint KT_VECTOR_BYTES = 16;
layout(constant_id = 4) const uint KT_ITEMS = 1;

layout(binding = 0) restrict readonly buffer X { KT_ELEM x[]; };
layout(binding = 0) restrict readonly buffer X1 { uint x1[]; };
layout(binding = 0) restrict readonly buffer X2 { uvec2 x2[]; };
layout(binding = 0) restrict readonly buffer X4 { uvec4 x4[]; };
layout(binding = 1) restrict writeonly buffer Y { KT_ELEM y[]; };
layout(binding = 1) restrict writeonly buffer Y1 { uint y1[]; };
layout(binding = 1) restrict writeonly buffer Y2 { uvec2 y2[]; };
layout(binding = 1) restrict writeonly buffer Y4 { uvec4 y4[]; };

layout(push_constant) uniform Dims {
  uint n;
} dims;

#if defined(KT_PRECISION_FP32)
const uint ELEMENT_BYTES = 4;
#else
const uint ELEMENT_BYTES = 2;
#endif
const uint PER_WORD = KT_VECTOR_BYTES / ELEMENT_BYTES;

void main() {
  const uint words = dims.n / PER_WORD;
  const uint per_pass = gl_NumWorkGroups.x * gl_WorkGroupSize.x * KT_ITEMS;
  const uint first = gl_WorkGroupID.x * gl_WorkGroupSize.x * KT_ITEMS + gl_LocalInvocationID.x;
  for (uint base = first; base < words; base += per_pass) {
    // uvec4 holds a word of any width (narrower ones use its first lanes); the branches on
    // KT_VECTOR_BYTES fold away at pipeline creation.
    uvec4 w[KT_ITEMS];
    for (uint item = 0; item < KT_ITEMS; ++item) {
      const uint i = base + item * gl_WorkGroupSize.x;
      if (i >= words) break;
      if (KT_VECTOR_BYTES == 16) w[item] = x4[i];
      else if (KT_VECTOR_BYTES == 8) w[item].xy = x2[i];
      else w[item].x = x1[i];
    }
    for (uint item = 0; item < KT_ITEMS; ++item) {
      const uint i = base + item * gl_WorkGroupSize.x;
      if (i >= words) break;
      if (KT_VECTOR_BYTES == 16) y4[i] = w[item];
      else if (KT_VECTOR_BYTES == 8) y2[i] = w[item].xy;
      else y1[i] = w[item].x;
    }
  }
  const uint tail = words * PER_WORD + first;
  if (first < PER_WORD && tail < dims.n) y[tail] = x[tail];
}
