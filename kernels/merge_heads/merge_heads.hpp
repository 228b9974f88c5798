// The step between an attention and its output projection: attention's heads-first output
// x [batch, heads, seq, head_dim] laid out token by token, y [batch * seq, heads * head_dim]
// (one token per row, its heads side by side), the layout the projection's GEMM reads.
#pragma once

#include "kernels/family.hpp"

namespace ktune {

const KernelFamily& merge_heads_family();
const CpuKernel& merge_heads_cpu_kernel();

}  // namespace ktune
