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

std::string cuda_variant_key(const KernelFamily& family, const Problem& problem, const Config& config,
                             const SearchSpace& space) {
  const auto launch_only = space.launch_only_names();
  Config compiled;
  for (const auto& [name, value] : config.values)
    if (std::find(launch_only.begin(), launch_only.end(), name) == launch_only.end())
      compiled.values.emplace_back(name, value);
  std::string key = family.name() + "|" + std::string(to_string(problem.precision)) + "|" + compiled.key() + "|";
  for (const std::string& dim : compiled_dims(family)) key += dim + "=" + std::to_string(problem.dim(dim)) + ";";
  return key;
}

std::string_view library_cuda_arch(int major, int minor) {
  // sm_90a code runs on sm_90 only; sm_80 code on every 8.x device (same major version).
  if (major == 9 && minor == 0) return "sm_90a";
  if (major == 8) return "sm_80";
  if (major > 9 || (major == 9 && minor > 0)) return "compute_80";
  return "";
}

}  // namespace ktune::library
