// The row reduction that the Vulkan row shaders share (rmsnorm, layernorm, residual_layernorm,
// instance_norm): a group of KT_THREADS_PER_ROW consecutive invocations owns one row. Include it
// after declaring the specialization constant KT_THREADS_PER_ROW (a power of two no larger than
// the workgroup) and enabling GL_KHR_shader_subgroup_arithmetic and _shuffle.

// One partial sum per subgroup, for rows wider than a subgroup.
shared float partials[gl_WorkGroupSize.x];

// Sum of v over the invocations of this row. Every invocation of the workgroup calls it (it may
// hold a barrier). Subgroups are runs of consecutive invocations, so a row group narrower than
// a subgroup is an aligned part of one (reduced by butterfly shuffles), and a wider one is
// whole subgroups (reduced by subgroupAdd, then through shared memory).
float row_sum(float v) {
  if (KT_THREADS_PER_ROW < gl_SubgroupSize) {
    [[unroll]] for (uint offset = 1; offset < KT_THREADS_PER_ROW; offset <<= 1) v += subgroupShuffleXor(v, offset);
    return v;
  }
  v = subgroupAdd(v);
  if (KT_THREADS_PER_ROW == gl_SubgroupSize) return v;
  barrier();  // the previous call's readers are done with partials
  if (subgroupElect()) partials[gl_SubgroupID] = v;
  barrier();
  const uint per_row = KT_THREADS_PER_ROW / gl_SubgroupSize;
  const uint first = gl_LocalInvocationID.x / KT_THREADS_PER_ROW * per_row;
  float total = 0.0;
  for (uint k = 0; k < per_row; ++k) total += partials[first + k];
  return total;
}
