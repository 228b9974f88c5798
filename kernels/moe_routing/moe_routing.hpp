// Mixture-of-experts routing: the gate's softmax over E experts, each token's top-k experts, a
// capacity per expert, and the tokens permuted into expert-contiguous order (the input of a
// grouped GEMM in the contiguous layout: kernels/grouped_gemm/).
//
//   logits      [tokens, experts]         the router's scores
//   x           [tokens, hidden]          the tokens
//   weights     [tokens, top_k] fp32      softmax probability of each chosen expert (renormalize=1:
//                                         over the chosen ones, Mixtral's form)
//   expert_ids  [tokens, top_k] int32     the chosen experts, largest logit first; equal logits go to
//                                         the lower expert index (the order is exact in every precision)
//   rows        [tokens, top_k] int32     where the choice's copy of x lies in `dispatched`, -1 when
//                                         the expert was full and the choice was dropped
//   counts      [experts] int32           tokens each expert kept (the grouped GEMM's group sizes)
//   dropped     [1] int32                 choices dropped by the capacity
//   dispatched  [tokens * top_k, hidden]  expert 0's tokens, then expert 1's...; each expert's in
//                                         token order; rows past the kept total are zero
//
// Capacity: an expert keeps its first `capacity` tokens in token order (GShard's rule: earlier
// tokens first), capacity = ceil(capacity_percent / 100 * tokens * top_k / experts), at least 1
// and at most tokens;
// capacity_percent 0 means no limit. A token chooses an expert at most once, so an expert's
// position of token t is the number of earlier tokens that chose it: a prefix sum over tokens.
#pragma once

#include <algorithm>
#include <cstdint>

#include "kernels/family.hpp"

namespace ktune {
namespace moe_routing {

struct Shape {
  std::int64_t tokens, experts, top_k, hidden, capacity_percent;
  bool renormalize;
  std::int64_t capacity() const {
    if (capacity_percent == 0) return tokens;
    const std::int64_t wanted = (capacity_percent * tokens * top_k + 100 * experts - 1) / (100 * experts);
    return std::clamp<std::int64_t>(wanted, 1, tokens);
  }
  static Shape of(const Problem& problem);  // InputError for top_k > experts or renormalize > 1
};

}  // namespace moe_routing

const KernelFamily& moe_routing_family();
const CpuKernel& moe_routing_cpu_kernel();

}  // namespace ktune
