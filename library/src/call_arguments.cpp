#include "library/src/call_arguments.hpp"

#include <algorithm>
#include <map>
#include <string>

#include "tuner/core/errors.hpp"

namespace ktune::library {
namespace {

using kernels::Error;
using kernels::ErrorCode;

std::string names_of(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& name : names) out += (out.empty() ? "" : ", ") + name;
  return out;
}

// make_problem's messages speak of the command line (--shape, --precision): say "dim" instead.
std::string without_flag(std::string message) {
  for (const char* flag : {"--shape: ", "--precision: "})
    if (message.rfind(flag, 0) == 0) message.erase(0, std::string(flag).size());
  return message;
}

}  // namespace

const KernelFamily& family_named(std::string_view name) {
  std::vector<std::string> known;
  for (const KernelFamily* family : compiled_families(false)) {
    if (family->name() == name) return *family;
    known.push_back(family->name());
  }
  throw Error(ErrorCode::bad_argument, "family: '" + std::string(name) + "' is not a family of ktune::kernels; "
                                       "the families are: " + names_of(known));
}

Precision internal_precision(kernels::Precision precision) {
  switch (precision) {
    case kernels::Precision::fp32: return Precision::fp32;
    case kernels::Precision::tf32: return Precision::tf32;
    case kernels::Precision::fp16: return Precision::fp16;
    case kernels::Precision::bf16: return Precision::bf16;
    case kernels::Precision::fp8_e4m3: return Precision::fp8_e4m3;
  }
  throw Error(ErrorCode::bad_argument, "precision: not one of fp32, tf32, fp16, bf16, fp8_e4m3");
}

Problem problem_of(const KernelFamily& family, std::span<const kernels::DimArgument> dims,
                   kernels::Precision precision) {
  std::map<std::string, std::int64_t> given;
  std::vector<std::string> names;
  for (const DimSpec& spec : family.dims()) names.push_back(spec.name);
  for (const auto& dim : dims) {
    const std::string name(dim.name);
    if (std::find(names.begin(), names.end(), name) == names.end())
      throw Error(ErrorCode::bad_argument, "dim '" + name + "' is not a dim of " + family.name() + "; its dims are: " +
                                               names_of(names));
    if (!given.emplace(name, dim.value).second)
      throw Error(ErrorCode::bad_argument, "dim '" + name + "' is given twice");
  }
  for (const DimSpec& spec : family.dims())
    if (spec.min_value >= 1 && !given.count(spec.name))
      throw Error(ErrorCode::bad_argument, "dim '" + spec.name + "' of " + family.name() + " is missing (" + spec.help +
                                               "); a call gives every size: " + names_of(names));
  // make_problem also lays out the family's tensors, so a rule of the family's own about its
  // shape fails here too.
  try {
    return family.make_problem(given, internal_precision(precision));
  } catch (const InputError& e) {
    const std::string message = without_flag(e.what());
    const bool about_precision = message.find("is not supported by") != std::string::npos;
    throw Error(about_precision ? ErrorCode::unsupported : ErrorCode::bad_argument,
                (about_precision ? "precision " : "dim ") + message);
  }
}

std::vector<void*> tensors_in_order(const KernelFamily& family, const Problem& problem,
                                    std::span<const kernels::TensorArgument> tensors) {
  const std::vector<TensorSpec> specs = family.tensors(problem);
  std::vector<std::string> names;
  for (const auto& spec : specs) names.push_back(spec.name);
  std::vector<void*> ordered(specs.size(), nullptr);
  std::vector<bool> seen(specs.size(), false);
  for (const auto& tensor : tensors) {
    const auto at = std::find(names.begin(), names.end(), tensor.name);
    if (at == names.end())
      throw Error(ErrorCode::bad_argument, "tensor '" + std::string(tensor.name) + "' is not a tensor of " +
                                               family.name() + "; its tensors are: " + names_of(names));
    const auto index = static_cast<std::size_t>(at - names.begin());
    if (seen[index]) throw Error(ErrorCode::bad_argument, "tensor '" + names[index] + "' is given twice");
    seen[index] = true;
    ordered[index] = const_cast<void*>(tensor.data);  // outputs arrive as const void* in TensorArgument
  }
  for (std::size_t t = 0; t < specs.size(); ++t) {
    if (!seen[t])
      throw Error(ErrorCode::bad_argument, "tensor '" + names[t] + "' of " + family.name() + " is missing; a call gives "
                                           "all of: " + names_of(names));
    if (!ordered[t] && specs[t].elements > 0)
      throw Error(ErrorCode::bad_argument, "tensor '" + names[t] + "' is null");
  }
  return ordered;
}

}  // namespace ktune::library
