// GeGLU activation, fused: out[r, c] = gelu(x[r, c]) * x[r, cols + c], with the exact (erf) GELU
// that PyTorch uses by default: gelu(g) = 0.5 * g * (1 + erf(g / sqrt(2))), not the tanh
// approximation.
// Tensors: x [rows, 2*cols] holding gate and up halves side by side (input), out [rows, cols].
#pragma once

#include "kernels/family.hpp"

namespace ktune {

const KernelFamily& geglu_family();
const CpuKernel& geglu_cpu_kernel();

}  // namespace ktune
