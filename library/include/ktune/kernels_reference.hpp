// Checking a call of ktune::kernels against ktune's float64 reference, the check every tuned
// variant passed: random inputs rounded to the call's precision, the reference's outputs from
// those rounded inputs, and the relative L2 error of what a call wrote.
//
//   kk::ReferenceProblem problem("rmsnorm", {{"rows", 33}, {"cols", 1000}}, kk::Precision::bf16, 7);
//   copy problem.data("x") and problem.data("weight") to the device, run the call, copy "y" back;
//   double error = problem.error("y", host_copy_of_y);
//   bool ok = error <= problem.tolerance();
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "ktune/kernels.hpp"

namespace ktune::kernels {

class ReferenceProblem {
 public:
  ReferenceProblem(std::string_view family, const std::vector<DimArgument>& dims, Precision precision,
                   std::uint64_t seed);
  ~ReferenceProblem();
  ReferenceProblem(ReferenceProblem&&) noexcept;
  ReferenceProblem& operator=(ReferenceProblem&&) noexcept;

  // The family's tensors in order, as TensorInfo of families() lists them.
  std::vector<std::string> tensor_names() const;
  // The tensor as a call stores it: an input's random values, an output's bytes (zero).
  const void* data(std::string_view tensor) const;
  std::size_t bytes(std::string_view tensor) const;
  // Relative L2 error of an output a call wrote (stored in the call's precision) against the
  // float64 reference; NaN when any value is NaN or infinite.
  double error(std::string_view output, const void* written) const;
  // The largest error the family accepts at this precision.
  double tolerance() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ktune::kernels
