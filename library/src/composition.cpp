#include "library/src/composition.hpp"

#include <algorithm>

#include "kernels/common/cpu_numeric.hpp"
#include "library/src/call_arguments.hpp"

namespace ktune::library {

using kernels::Error;
using kernels::ErrorCode;

ComposedCall::ComposedCall(const Executor& executor, const KernelFamily& family, const Problem& problem,
                           kernels::Precision precision)
    : composition_(*family.composition(problem)), problem_(problem) {
  const std::vector<std::string> own = family.tensor_names(problem);
  auto source_of = [&](const std::string& name) {
    if (const auto it = std::find(own.begin(), own.end(), name); it != own.end()) return static_cast<int>(it - own.begin());
    for (std::size_t i = 0; i < composition_.intermediates.size(); ++i)
      if (composition_.intermediates[i].name == name) return -1 - static_cast<int>(i);
    throw std::logic_error(family.name() + "'s composition names '" + name + "', neither a tensor nor an intermediate");
  };
  for (const Composition::Stage& stage : composition_.stages) {
    const KernelFamily& stage_family = family_named(stage.family);
    if (!executor.runs(stage_family))
      throw Error(ErrorCode::unsupported, family.name() + " runs where all its stages' families do, and " +
                                              stage.family + " has no " + executor.backend() +
                                              " implementation in this library");
    std::vector<kernels::DimArgument> dims;
    for (const auto& [name, value] : stage.dims) dims.push_back({name, value});
    Problem stage_problem = problem_of(stage_family, dims, precision);
    std::vector<int> sources;
    for (const std::string& name : stage_family.tensor_names(stage_problem)) {
      const auto bound = std::find_if(stage.tensors.begin(), stage.tensors.end(),
                                      [&](const auto& binding) { return binding.first == name; });
      if (bound == stage.tensors.end())
        throw std::logic_error(family.name() + "'s composition gives no tensor '" + name + "' to " + stage.family);
      sources.push_back(source_of(bound->second));
    }
    stages_.push_back({&stage_family, std::move(stage_problem), std::move(sources)});
  }
  constants_.assign(composition_.intermediates.size(), nullptr);
  for (const Composition::Intermediate& intermediate : composition_.intermediates) {
    const Precision storage = intermediate.storage.value_or(problem.precision);
    bytes_.push_back(static_cast<std::size_t>(intermediate.elements * element_bytes(storage)));
    const bool constant = !intermediate.fill.empty();
    scratch_slot_.push_back(constant ? -1 : static_cast<int>(scratch_bytes_.size()));
    if (!constant) scratch_bytes_.push_back(bytes_.back());
  }
}

void ComposedCall::allocate_constants(Executor& executor, const Allocate& allocate) {
  bool filled = false;
  for (std::size_t i = 0; i < composition_.intermediates.size(); ++i) {
    const Composition::Intermediate& intermediate = composition_.intermediates[i];
    if (intermediate.fill.empty()) continue;
    constants_[i] = allocate(bytes_[i]);
    std::vector<char> host(bytes_[i]);
    cpu::store_values(intermediate.storage.value_or(problem_.precision), intermediate.fill, host.data());
    executor.copy_to_device(constants_[i], host.data(), bytes_[i]);
    filled = true;
  }
  if (filled) executor.synchronize();
}

void ComposedCall::launch(std::span<void* const> tensors, void* stream, const Choose& choose,
                          const std::vector<void*>& scratch) const {
  std::vector<void*> ordered;
  for (const Stage& stage : stages_) {
    ordered.clear();
    for (const int source : stage.sources) {
      if (source >= 0) {
        ordered.push_back(tensors[static_cast<std::size_t>(source)]);
        continue;
      }
      const auto i = static_cast<std::size_t>(-1 - source);
      ordered.push_back(scratch_slot_[i] >= 0 ? scratch[static_cast<std::size_t>(scratch_slot_[i])] : constants_[i]);
    }
    choose(*stage.family, stage.problem)->launch(ordered, stream);
  }
}

kernels::ConfigChoice ComposedCall::choice(const Choose& choose) const {
  kernels::ConfigChoice composed{"composed", "stages", "", "{}", 0, ""};
  for (const Stage& stage : stages_) {
    const kernels::ConfigChoice part = choose(*stage.family, stage.problem)->choice;
    const std::string separator = composed.config.empty() ? "" : "; ";
    composed.config += separator + stage.family->name() + " (" + part.source + "): " + part.config;
    composed.tuned_shape += separator + stage.family->name() + ": " + (part.tuned_shape.empty() ? "-" : part.tuned_shape);
  }
  return composed;
}

}  // namespace ktune::library
