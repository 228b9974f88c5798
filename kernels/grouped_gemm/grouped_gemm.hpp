// Grouped GEMM for mixture-of-experts layers, the contiguous layout: the rows of A are the
// tokens routed to each expert, expert after expert, and expert g's rows are multiplied by its
// own weight B[g] (nn.Linear's [n, k]):
//
//   a           [m, k]            the tokens, grouped by expert (group g: group_sizes[g] rows)
//   b           [experts, n, k]   one weight per expert
//   group_sizes [experts] int32   rows of each group, summing to m (a group may be empty)
//   d           [m, n]            d[rows of g] = a[rows of g] · b[g]ᵀ, fp32 accumulation
//
// The inputs give group g a ragged share of m (group_sizes_of), with group 1 empty when there
// are three or more experts, the same in the inputs, the reference and the kernels' tests.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/family.hpp"

namespace ktune {
namespace grouped_gemm {

// Rows of each group: shares 1 + (g * 7919) % 5 of m (an uneven spread), group 1 none when
// there are three or more groups, the remainder on the last group.
std::vector<std::int64_t> group_sizes_of(std::int64_t m, std::int64_t experts);

}  // namespace grouped_gemm

const KernelFamily& grouped_gemm_family();
const CpuKernel& grouped_gemm_cpu_kernel();

}  // namespace ktune
