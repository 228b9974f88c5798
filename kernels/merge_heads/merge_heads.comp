#version 450
#extension GL_GOOGLE_include_directive : require
#include "common/vulkan_common.glsl"

// merge_heads on Vulkan (kernels/merge_heads/merge_heads.hpp has the problem): one invocation per
// element of y, in y's order, so neighbouring invocations write neighbouring elements (and read
// runs of head_dim). Workgroups walk the elements in a grid-stride loop (the grid is capped at
// max_grid_x, or at the max_workgroups tunable).

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;

layout(binding = 0) restrict readonly buffer X { KT_ELEM x[]; };
layout(binding = 1) restrict writeonly buffer Y { KT_ELEM y[]; };

layout(push_constant) uniform Dims {
  uint batch, heads, seq, head_dim;
} dims;

void main() {
  const uint elements = dims.batch * dims.seq * dims.heads * dims.head_dim;
  for (uint e = gl_GlobalInvocationID.x; e < elements; e += gl_NumWorkGroups.x * gl_WorkGroupSize.x) {
    const uint vector = e / dims.head_dim, d = e - vector * dims.head_dim;  // y's (token, head) and element
    const uint token = vector / dims.heads, h = vector - token * dims.heads;
    const uint b = token / dims.seq, s = token - b * dims.seq;
    y[e] = x[((b * dims.heads + h) * dims.seq + s) * dims.head_dim + d];
  }
}
