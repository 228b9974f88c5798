// RMSNorm over the last dimension: out[r, c] = x[r, c] / sqrt(mean_c(x[r, :]^2) + eps) * weight[c].
// Tensors: x [rows, cols], weight [cols] (inputs), out [rows, cols] (output).
#pragma once

#include "kernels/family.hpp"

namespace ktune {

inline constexpr double kRmsNormEpsilon = 1e-6;

const KernelFamily& rmsnorm_family();
const CpuKernel& rmsnorm_cpu_kernel();

}  // namespace ktune
