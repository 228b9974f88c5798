// SwiGLU activation, fused: out[r, c] = silu(x[r, c]) * x[r, cols + c], silu(g) = g / (1 + e^-g).
// Tensors: x [rows, 2*cols] holding gate and up halves side by side (input), out [rows, cols].
#pragma once

#include "kernels/family.hpp"

namespace ktune {

const KernelFamily& swiglu_family();
const CpuKernel& swiglu_cpu_kernel();

}  // namespace ktune
