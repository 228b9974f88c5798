// LayerNorm fused into the linear layer that follows it (a pre-norm transformer's QKV or MLP input
// projection): y = LN(x) · Wᵀ + b, with
//   LN(x)[r, p] = (x[r, p] - mean[r]) / sqrt(var[r] + 1e-5) * gamma[p] + beta[p]  (biased var).
// Tensors (row-major), in kernel order:
//   x     [m, k]  the tokens (input)
//   gamma [k], beta [k]  the LayerNorm's affine (inputs)
//   w     [n, k]  nn.Linear's weight (input)
//   bias  [n]     (input)
//   y     [m, n]  (output)
// Each backend normalises A while loading it into the GEMM (the row statistics first), never
// writing LN(x) to memory.
#pragma once

#include "kernels/family.hpp"

namespace ktune {

inline constexpr double kLayerNormLinearEpsilon = 1e-5;

const KernelFamily& layernorm_linear_family();
const CpuKernel& layernorm_linear_cpu_kernel();

}  // namespace ktune
