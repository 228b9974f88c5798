// LayerNorm over the last dimension, as torch.nn.functional.layer_norm with the biased variance:
//   mean[r] = sum_c x[r, c] / cols
//   var[r]  = sum_c (x[r, c] - mean[r])^2 / cols
//   out[r, c] = (x[r, c] - mean[r]) / sqrt(var[r] + eps) * gamma[c] + beta[c],  eps = 1e-5
// Tensors (row-major): x [rows, cols], gamma [cols], beta [cols] (inputs), out [rows, cols] (output).
#pragma once

#include "kernels/family.hpp"

namespace ktune {

inline constexpr double kLayerNormEpsilon = 1e-5;

const KernelFamily& layernorm_family();
const CpuKernel& layernorm_cpu_kernel();

}  // namespace ktune
