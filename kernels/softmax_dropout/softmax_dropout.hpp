// Softmax over the last dimension followed by dropout, fused (attention probabilities in
// training):
//   p[r, c]   = exp(x[r, c] - m[r]) / sum_k exp(x[r, k] - m[r]),  m[r] = max_c x[r, c]
//   out[r, c] = keep(i) ? p[r, c] / (1 - P) : 0,                   i = r * cols + c
// with the dropout probability P = 0.1 fixed (kSoftmaxDropoutP; not a problem dim) and keep(i)
// drawn by Philox4x32-10 exactly as kernels/common/philox.hpp specifies: key = the seed's two
// 32-bit halves, counter = (i / 8 as two 32-bit halves, offset as two 32-bit halves), element i
// takes 16 bits, half i % 2 of word (i % 8) / 2, u = bits * 2^-16, keep iff u >= P. The seed and
// offset are the call's: the int32 tensor rng = {seed, offset} (each read as an unsigned 32-bit
// value), a tensor and not dims, so a new mask per call (a training step) is a new value on the
// device (drawn by the caller, captured in a CUDA graph like any input) and never a new tuned
// shape. Every backend and the float64 reference draw the same mask for the same rng.
// Tensors (row-major): x [rows, cols] (input), rng [2] (input, int32), out [rows, cols] (output).
#pragma once

#include <cstdint>

#include "kernels/family.hpp"
// kSoftmaxDropoutP (shared with the CUDA kernel).
#include "kernels/softmax_dropout/softmax_dropout_constants.hpp"

namespace ktune {

const KernelFamily& softmax_dropout_family();
const CpuKernel& softmax_dropout_cpu_kernel();

}  // namespace ktune
