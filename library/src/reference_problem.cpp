// ktune::kernels::ReferenceProblem: the inputs and float64 reference every tuned variant was
// checked against (tuner/backends/host_problem.hpp), for checking the library's calls.
#include <algorithm>

#include "ktune/kernels_reference.hpp"
#include "library/src/call_arguments.hpp"
#include "library/src/guarded.hpp"
#include "tuner/backends/host_problem.hpp"
#include "tuner/backends/output_check.hpp"

namespace ktune::kernels {

struct ReferenceProblem::Impl {
  const KernelFamily* family;
  Problem problem;
  HostProblem host;

  std::size_t index(std::string_view tensor) const {
    for (std::size_t t = 0; t < host.specs.size(); ++t)
      if (host.specs[t].name == tensor) return t;
    std::string names;
    for (const auto& spec : host.specs) names += (names.empty() ? "" : ", ") + spec.name;
    throw Error(ErrorCode::bad_argument,
                "tensor '" + std::string(tensor) + "' is not a tensor of " + family->name() + "; its tensors are: " + names);
  }
};

ReferenceProblem::ReferenceProblem(std::string_view family, const std::vector<DimArgument>& dims, Precision precision,
                                   std::uint64_t seed)
    : impl_(std::make_unique<Impl>()) {
  library::guarded([&] {
    impl_->family = &library::family_named(family);
    impl_->problem = library::problem_of(*impl_->family, dims, precision);
    impl_->host = make_host_problem(*impl_->family, impl_->problem, seed);
  });
  // Outputs have no stored bytes in a host problem: give them zeroed storage to copy.
  for (std::size_t t = 0; t < impl_->host.specs.size(); ++t)
    if (impl_->host.stored[t].empty()) impl_->host.stored[t].assign(impl_->host.bytes[t], 0);
}

ReferenceProblem::~ReferenceProblem() = default;
ReferenceProblem::ReferenceProblem(ReferenceProblem&&) noexcept = default;
ReferenceProblem& ReferenceProblem::operator=(ReferenceProblem&&) noexcept = default;

std::vector<std::string> ReferenceProblem::tensor_names() const {
  std::vector<std::string> names;
  for (const auto& spec : impl_->host.specs) names.push_back(spec.name);
  return names;
}

const void* ReferenceProblem::data(std::string_view tensor) const { return impl_->host.stored[impl_->index(tensor)].data(); }

std::size_t ReferenceProblem::bytes(std::string_view tensor) const { return impl_->host.bytes[impl_->index(tensor)]; }

double ReferenceProblem::error(std::string_view output, const void* written) const {
  const std::size_t t = impl_->index(output);
  if (!impl_->host.specs[t].is_output)
    throw Error(ErrorCode::bad_argument, "tensor '" + std::string(output) + "' is an input, not an output");
  if (!written) throw Error(ErrorCode::bad_argument, "written is null");
  return library::guarded([&] {
    return stored_outputs_error(
        {StoredOutput{written, impl_->host.specs[t].precision(impl_->problem), impl_->host.expected[t]}});
  });
}

double ReferenceProblem::tolerance() const { return impl_->family->tolerance(impl_->problem.precision); }

}  // namespace ktune::kernels
