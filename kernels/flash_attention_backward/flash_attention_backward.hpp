// Flash attention's backward pass: from the forward's inputs and outputs and the gradient of its
// output, the gradients of q, k and v (kernels/flash_attention/flash_attention.hpp has the
// forward, its layouts, grouped-query heads and the bottom-right causal mask).
//
//   inputs  q [batch, heads, seq_q, head_dim], k and v [batch, kv_heads, seq_kv, head_dim],
//           o and dout (the gradient of o) [batch, heads, seq_q, head_dim], lse [batch, heads, seq_q] fp32 (the
//           forward's log-sum-exp; +inf for a row that sees no key), scale [1] fp32
//   outputs dq like q, dk and dv like k (each kv head's summed over its group of query heads)
//
// With P = exp(scale q·kᵀ - lse) (the forward's probabilities, recomputed), D_i = dout_i · o_i:
//   dv_j = sum_i P_ij dout_i,  dS_ij = P_ij (dout_i · v_j - D_i),
//   dq_i = scale sum_j dS_ij k_j,  dk_j = scale sum_i dS_ij q_i.
// The inputs' o and lse are the forward's (computed by the float64 forward reference) wherever
// that is cheap; on shapes too large for it, o is random and lse an upper bound of each row's
// log-sum-exp (the gradient formula above, which the reference and the kernels compute alike).
#pragma once

#include "kernels/family.hpp"

namespace ktune {

const KernelFamily& flash_attention_backward_family();
const CpuKernel& flash_attention_backward_cpu_kernel();

}  // namespace ktune
