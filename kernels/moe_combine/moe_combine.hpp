// The inverse of moe_routing: each token's experts' outputs, found through the routing's rows and
// weighted by its weights, summed back into the token's row.
//
//   expert_out [tokens * top_k, hidden]  the experts' outputs in moe_routing's dispatched order
//                                        (the grouped GEMM's output)
//   weights    [tokens, top_k] fp32      the routing's weights
//   rows       [tokens, top_k] int32     the routing's rows; -1 for a dropped choice (adds nothing)
//   y          [tokens, hidden]          y[t] = sum over k of weights[t, k] * expert_out[rows[t, k]]
//
// The inputs are a routing's: the kept choices numbered 0, 1, ... in a random order, one choice in
// nine dropped (dropped_choice), so a kernel must follow the rows and skip the -1s.
#pragma once

#include <cstdint>

#include "kernels/family.hpp"

namespace ktune {
namespace moe_combine {

// Whether choice c (= token * top_k + k) of the generated inputs is dropped.
inline bool dropped_choice(std::int64_t c) { return (c * 7919) % 9 == 4; }

}  // namespace moe_combine

const KernelFamily& moe_combine_family();
const CpuKernel& moe_combine_cpu_kernel();

}  // namespace ktune
