#include "kernels/family.hpp"

#include <algorithm>
#include <random>

#include "tuner/core/errors.hpp"

namespace ktune {

double KernelFamily::byte_count(const Problem& problem) const {
  double bytes = 0;
  // A tensor updated in place is read and written.
  for (const auto& tensor : tensors(problem))
    bytes += static_cast<double>(tensor.bytes(problem)) * (tensor.read_write ? 2 : 1);
  return bytes;
}

std::vector<std::pair<std::string, std::string>> KernelFamily::source_defines(const Problem&,
                                                                              const Config& config) const {
  std::vector<std::pair<std::string, std::string>> defines;
  for (const auto& [name, value] : config.values) defines.emplace_back(name, to_string(value));
  return defines;
}

std::vector<std::string> KernelFamily::tensor_names(const Problem& problem) const {
  std::vector<std::string> names;
  for (auto& tensor : tensors(problem)) names.push_back(std::move(tensor.name));
  return names;
}

NamedTensors<std::vector<double>> KernelFamily::named_tensors(const Problem& problem, HostTensors& host) const {
  return {name(), tensor_names(problem), host};
}

double KernelFamily::tolerance(Precision precision) const { return default_tolerance(precision); }

Problem KernelFamily::make_problem(const std::map<std::string, std::int64_t>& overrides,
                                   Precision precision) const {
  const auto specs = dims();
  std::vector<std::string> valid;
  for (const auto& spec : specs) valid.push_back(spec.name);
  for (const auto& [name, value] : overrides) {
    const auto spec = std::find_if(specs.begin(), specs.end(), [&](const DimSpec& s) { return s.name == name; });
    if (spec == specs.end())
      throw InputError("--shape: '" + name + "' is not a dimension of " + this->name() +
                       "; its dimensions are: " + join_names(valid));
    if (value < spec->min_value)
      throw InputError("--shape: " + name + "=" + std::to_string(value) + " must be at least " +
                       std::to_string(spec->min_value));
  }
  const auto supported = precisions();
  bool precision_ok = false;
  std::vector<std::string> precision_names;
  for (Precision p : supported) {
    precision_ok = precision_ok || p == precision;
    precision_names.emplace_back(to_string(p));
  }
  if (!precision_ok)
    throw InputError("--precision: " + std::string(to_string(precision)) + " is not supported by " +
                     this->name() + "; supported: " + join_names(precision_names));

  Problem problem;
  problem.family = name();
  problem.precision = precision;
  for (const auto& spec : specs) {
    const auto it = overrides.find(spec.name);
    problem.dims.emplace_back(spec.name, it == overrides.end() ? spec.default_value : it->second);
  }
  // The product of all dims is bounded before any tensor size is computed, so no tensor's
  // element count can overflow (a GEMM's m*n*k may pass 2^40; its tensors m*k, n*k, m*n may not).
  // The message names where the sizes came from: --shape, or the family's own (a T1 spec's
  // ProblemSize) when nothing was given.
  const std::string origin = overrides.empty()
                                 ? name() + "'s problem size (its default dims; for a T1 spec, its ProblemSize)"
                                 : "--shape";
  constexpr double kMaxDimProduct = 4.6e18;  // below 2^62
  constexpr std::int64_t kMaxTensorElements = std::int64_t{1} << 40;
  double product = 1;
  for (const auto& [dim, value] : problem.dims) product *= static_cast<double>(std::max<std::int64_t>(value, 1));
  if (product > kMaxDimProduct) throw InputError(origin + ": the problem is too large (the product of its dims exceeds 2^62)");
  for (const TensorSpec& tensor : tensors(problem))
    if (tensor.elements > kMaxTensorElements)
      throw InputError(origin + ": the problem is too large (tensor " + tensor.name + " would hold " +
                       std::to_string(tensor.elements) + " elements, more than 2^40)");
  return problem;
}

HostTensors KernelFamily::make_inputs(const Problem& problem, std::uint64_t seed) const {
  std::mt19937_64 rng(seed);
  HostTensors host;
  for (const auto& tensor : tensors(problem)) {
    std::vector<double> values(static_cast<std::size_t>(tensor.elements), 0.0);
    if (!tensor.is_output) {
      std::uniform_real_distribution<double> uniform(tensor.low, tensor.high);
      for (auto& v : values) v = uniform(rng);
    }
    host.push_back(std::move(values));
  }
  return host;
}

std::vector<std::string> table_families(const KernelFamily& family) {
  const auto composition = family.composition(family.make_problem({}, family.precisions().front()));
  if (!composition) return {family.name()};
  std::vector<std::string> names;
  for (const Composition::Stage& stage : composition->stages)
    if (std::find(names.begin(), names.end(), stage.family) == names.end()) names.push_back(stage.family);
  return names;
}

}  // namespace ktune
