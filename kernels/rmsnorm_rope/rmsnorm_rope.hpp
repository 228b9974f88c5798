// RMSNorm per attention head fused with rotary position embedding (RoPE): the QK-norm + RoPE step
// of modern attention blocks, applied to the query or key projection.
//
// Tensors, row-major (inputs first):
//   x      [rows, heads * head_dim]  one token per row, its heads side by side
//   weight [head_dim]                RMSNorm scale, shared by all heads
//   cos    [rows, head_dim / 2]      rotation table of the token at position `row`
//   sin    [rows, head_dim / 2]
//   out    [rows, heads * head_dim]  (output)
//
// For each row r and head h, with v = x[r, h*head_dim : (h+1)*head_dim] and half = head_dim / 2:
//   y[d]          = v[d] / sqrt(mean_d(v^2) + 1e-6) * weight[d]          (RMSNorm over head_dim)
//   out[i]        = y[i] * cos[r, i] - y[i + half] * sin[r, i]            for i < half
//   out[i + half] = y[i + half] * cos[r, i] + y[i] * sin[r, i]
// This is the NeoX / Llama (Hugging Face rotate_half) convention: element i is paired with
// element i + half, not with its neighbour 2i+1 (the GPT-J interleaved convention). head_dim must
// be even. cos and sin are inputs, so any position layout (offsets, scaling, batching) is the
// caller's; ktune fills them with independent uniform values in [-1, 1] (not a true cos/sin pair:
// the kernel's arithmetic is the same whatever they hold, and independent values also catch a
// swapped cos and sin).
#pragma once

#include "kernels/family.hpp"

namespace ktune {

inline constexpr double kRmsNormRopeEpsilon = 1e-6;

const KernelFamily& rmsnorm_rope_family();
const CpuKernel& rmsnorm_rope_cpu_kernel();

}  // namespace ktune
