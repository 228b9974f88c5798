// Instance normalisation of an image batch, as torch.nn.InstanceNorm2d(channels, affine=True)
// in training mode (statistics of the input itself, the biased variance):
//   mean[b, c] = sum_{h, w} x[b, c, h, w] / (height * width)
//   var[b, c]  = sum_{h, w} (x[b, c, h, w] - mean[b, c])^2 / (height * width)
//   out[b, c, h, w] = (x[b, c, h, w] - mean[b, c]) / sqrt(var[b, c] + eps) * gamma[c] + beta[c]
// with eps = 1e-5. Tensors (NCHW, contiguous): x [batch, channels, height, width], gamma
// [channels], beta [channels] (inputs), out [batch, channels, height, width] (output).
//
// Each (batch, channel) plane is a row of height * width elements; the kernels are the row
// kernels of LayerNorm with the affine taken per row (its channel) instead of per column.
#pragma once

#include "kernels/family.hpp"

namespace ktune {

inline constexpr double kInstanceNormEpsilon = 1e-5;

const KernelFamily& instance_norm_family();
const CpuKernel& instance_norm_cpu_kernel();

}  // namespace ktune
