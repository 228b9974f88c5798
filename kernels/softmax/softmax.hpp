// Softmax over the last dimension, numerically stable (the row maximum is subtracted first):
//   m[r]      = max_c x[r, c]
//   out[r, c] = exp(x[r, c] - m[r]) / sum_k exp(x[r, k] - m[r])
// Tensors (row-major): x [rows, cols] (input), out [rows, cols] (output).
#pragma once

#include "kernels/family.hpp"

namespace ktune {

const KernelFamily& softmax_family();
const CpuKernel& softmax_cpu_kernel();

}  // namespace ktune
