// A call's arguments as ktune's own types: the family by name, the problem from the named dims
// and precision, the tensors in the family's order. Every mistake is an Error(bad_argument) or
// Error(unsupported) naming the argument.
#pragma once

#include <span>
#include <string_view>
#include <vector>

#include "kernels/family.hpp"
#include "ktune/kernels.hpp"

namespace ktune::library {

const KernelFamily& family_named(std::string_view name);
Precision internal_precision(kernels::Precision precision);
// Every dim that sets a size must be given; option dims (min_value 0) default to the family's.
Problem problem_of(const KernelFamily& family, std::span<const kernels::DimArgument> dims, kernels::Precision precision);
// Bytes of one tensor of the family at these dims (Context::tensor_bytes).
std::size_t tensor_bytes(std::string_view family, std::string_view tensor, const std::vector<kernels::DimArgument>& dims,
                         kernels::Precision precision);
// The tensors in KernelFamily::tensors() order; each must be given once and be non-null.
std::vector<void*> tensors_in_order(const KernelFamily& family, const Problem& problem,
                                    std::span<const kernels::TensorArgument> tensors);

}  // namespace ktune::library
