#include "library/src/cuda_variants.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <vector>

#include "tuner/backends/gpu_source.hpp"

namespace ktune::library {
namespace {

// compile_time_dims scans the source and every header it includes: once per family, not once
// per key (a call's config choice may make dozens of keys).
const std::vector<std::string>& compiled_dims(const KernelFamily& family) {
  static std::mutex mutex;
  static std::map<const KernelFamily*, std::vector<std::string>> dims;
  std::lock_guard lock(mutex);
  auto [found, inserted] = dims.try_emplace(&family);
  if (inserted && family.cuda_source()) found->second = compile_time_dims(family, *family.cuda_source());
  return found->second;
}

}  // namespace

std::string cuda_key_prefix(const KernelFamily& family, Precision precision) {
  return family.name() + "|" + std::string(to_string(precision)) + "|";
}

std::string cuda_key_prefix(const KernelFamily& family, Precision precision, const Config& config,
                            const SearchSpace& space) {
  const auto launch_only = space.launch_only_names();
  Config compiled;
  for (const auto& [name, value] : config.values)
    if (std::find(launch_only.begin(), launch_only.end(), name) == launch_only.end())
      compiled.values.emplace_back(name, value);
  return cuda_key_prefix(family, precision) + compiled.key() + "|";
}

std::string cuda_variant_key(const KernelFamily& family, const Problem& problem, const Config& config,
                             const SearchSpace& space, const std::vector<DimBound>& runtime) {
  std::string key = cuda_key_prefix(family, problem.precision, config, space);
  for (const std::string& dim : compiled_dims(family)) {
    const auto bound = std::find_if(runtime.begin(), runtime.end(), [&](const DimBound& b) { return b.dim == dim; });
    if (bound == runtime.end()) key += dim + "=" + std::to_string(problem.dim(dim)) + ";";
    else if (bound->bound) key += dim + "<=" + std::to_string(*bound->bound) + ";";
    else key += dim + "=any;";
  }
  return key;
}

bool cuda_dims_cover(std::string_view dims, const Problem& problem, Problem& compiled, double& slack) {
  compiled = problem;
  slack = 0;
  while (!dims.empty()) {
    const std::size_t end = dims.find(';');
    const std::string_view term = dims.substr(0, end);
    dims.remove_prefix(end == std::string_view::npos ? dims.size() : end + 1);
    const std::size_t equals = term.find('=');
    if (equals == std::string_view::npos || equals == 0) return false;
    const bool bounded = term[equals - 1] == '<';
    const std::string name(term.substr(0, bounded ? equals - 1 : equals));
    const std::string value(term.substr(equals + 1));
    const auto at = std::find_if(problem.dims.begin(), problem.dims.end(), [&](const auto& d) { return d.first == name; });
    if (at == problem.dims.end()) return false;
    if (value == "any") continue;
    const std::int64_t number = std::stoll(value);
    if (!bounded) {
      if (number != at->second) return false;
      continue;
    }
    if (at->second > number) return false;
    for (auto& [dim, v] : compiled.dims)
      if (dim == name) v = number;
    slack += static_cast<double>(number) / static_cast<double>(std::max<std::int64_t>(1, at->second));
  }
  return true;
}

std::string_view library_cuda_arch(int major, int minor) {
  // sm_90a code runs on sm_90 only; sm_80 code on every 8.x device (same major version).
  if (major == 9 && minor == 0) return "sm_90a";
  if (major == 8) return "sm_80";
  if (major > 9 || (major == 9 && minor > 0)) return "compute_80";
  return "";
}

}  // namespace ktune::library
