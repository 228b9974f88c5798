// Residual add fused with LayerNorm over the last dimension (the pre-norm transformer block's
// "h = x + residual; y = layer_norm(h)"):
//   s[r, c]   = x[r, c] + residual[r, c]                      (computed in float)
//   sum[r, c] = s[r, c] rounded to the problem's precision     (written: the new residual stream)
//   out[r, :] = layernorm(s[r, :]): (s - mean) / sqrt(var + eps) * gamma + beta, biased variance,
//               eps = 1e-5
// Rounding: LayerNorm reads the float sum s *before* it is rounded to the storage precision (as
// fused GPU kernels do: the sum stays in registers), not the rounded `sum` tensor. The float64
// reference computes s exactly from the (rounded) inputs and normalises that; for fp16/bf16 the
// difference between normalising s and normalising the stored sum is within the tolerance.
// Tensors (row-major): x [rows, cols], residual [rows, cols], gamma [cols], beta [cols] (inputs);
// out [rows, cols], sum [rows, cols] (outputs).
#pragma once

#include "kernels/family.hpp"

namespace ktune {

inline constexpr double kResidualLayerNormEpsilon = 1e-5;

const KernelFamily& residual_layernorm_family();
const CpuKernel& residual_layernorm_cpu_kernel();

}  // namespace ktune
