// ktune::kernels::families(): what each family of the library takes, read from the families'
// own declarations (kernels/<family>/).
#include "ktune/kernels.hpp"
#include "ktune/embedded/library_spaces.hpp"
#include "kernels/family.hpp"
#include "library/src/call_arguments.hpp"
#include "library/src/guarded.hpp"
#include "tuner/core/precision.hpp"

#include <algorithm>

namespace ktune::kernels {
namespace {

bool has_space(const std::string& family, std::string_view backend) {
  const std::string path = "search_spaces/" + family + "." + std::string(backend) + ".json";
  for (const auto& file : embedded::library_spaces)
    if (file.path == path) return true;
  return false;
}

std::optional<Precision> public_precision(ktune::Precision precision) {
  switch (precision) {
    case ktune::Precision::fp32: return Precision::fp32;
    case ktune::Precision::tf32: return Precision::tf32;
    case ktune::Precision::fp16: return Precision::fp16;
    case ktune::Precision::bf16: return Precision::bf16;
    case ktune::Precision::fp8_e4m3: return Precision::fp8_e4m3;
    default: return std::nullopt;  // fp64 and the integer storage types: not a library precision
  }
  return std::nullopt;
}

// The backends this build runs `family` on: those with its kernel and space, or for a composed
// family those that run every stage.
std::vector<Backend> backends_of(const KernelFamily& family, const Problem& problem) {
  std::vector<Backend> backends;
  if (const auto composition = family.composition(problem)) {
    backends = {Backend::cuda, Backend::hip, Backend::vulkan, Backend::cpu};
    for (const Composition::Stage& stage : composition->stages) {
      const KernelFamily& stage_family = find_family(stage.family);
      const auto runs = backends_of(stage_family, stage_family.make_problem(stage.dims, problem.precision));
      std::erase_if(backends, [&](Backend b) { return std::find(runs.begin(), runs.end(), b) == runs.end(); });
    }
    return backends;
  }
  const std::string name = family.name();
#ifdef KTUNE_LIBRARY_WITH_CUDA
  if (family.cuda_source() && has_space(name, "cuda")) backends.push_back(Backend::cuda);
#endif
#ifdef KTUNE_LIBRARY_WITH_HIP
  if (family.cuda_source() && has_space(name, "hip")) backends.push_back(Backend::hip);
#endif
#ifdef KTUNE_LIBRARY_WITH_VULKAN
  if (family.vulkan_shader() && has_space(name, "vulkan")) backends.push_back(Backend::vulkan);
#endif
  if (family.cpu_kernel() && has_space(name, "cpu")) backends.push_back(Backend::cpu);
  return backends;
}

}  // namespace

std::vector<FamilyInfo> families() {
  std::vector<FamilyInfo> out;
  for (const KernelFamily* family : compiled_families(false)) {
    FamilyInfo info;
    info.name = family->name();
    info.summary = family->summary();
    std::map<std::string, std::int64_t> defaults;
    for (const DimSpec& dim : family->dims()) {
      info.dims.push_back({dim.name, dim.default_value, dim.min_value, dim.help});
      defaults[dim.name] = dim.default_value;
    }
    const Problem problem = family->make_problem(defaults, family->precisions().front());
    for (const TensorSpec& tensor : family->tensors(problem))
      info.tensors.push_back({tensor.name, tensor.is_output, tensor.storage.has_value()});
    for (ktune::Precision precision : family->precisions())
      if (auto p = public_precision(precision)) info.precisions.push_back(*p);
    info.backends = backends_of(*family, problem);
    out.push_back(std::move(info));
  }
  return out;
}

std::vector<StageInfo> stages(std::string_view family_name, const std::vector<DimArgument>& dims, Precision precision) {
  return library::guarded([&] {
    const KernelFamily& family = library::family_named(family_name);
    std::vector<StageInfo> out;
    if (const auto composition = family.composition(library::problem_of(family, dims, precision)))
      for (const Composition::Stage& stage : composition->stages)
        out.push_back({stage.family, {stage.dims.begin(), stage.dims.end()}});
    return out;
  });
}

}  // namespace ktune::kernels
