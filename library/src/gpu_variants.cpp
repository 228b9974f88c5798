#include "library/src/gpu_variants.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <set>
#include <vector>

#include <nlohmann/json.hpp>

#include "library/src/executor.hpp"
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

std::string gpu_key_prefix(const KernelFamily& family, Precision precision) {
  return family.name() + "|" + std::string(to_string(precision)) + "|";
}

std::string gpu_key_prefix(const KernelFamily& family, Precision precision, const Config& config,
                            const SearchSpace& space) {
  const auto launch_only = space.launch_only_names();
  Config compiled;
  for (const auto& [name, value] : config.values)
    if (std::find(launch_only.begin(), launch_only.end(), name) == launch_only.end())
      compiled.values.emplace_back(name, value);
  return gpu_key_prefix(family, precision) + compiled.key() + "|";
}

std::string gpu_variant_key(const KernelFamily& family, const Problem& problem, const Config& config,
                             const SearchSpace& space, const std::vector<DimBound>& runtime) {
  std::string key = gpu_key_prefix(family, problem.precision, config, space);
  for (const std::string& dim : compiled_dims(family)) {
    const auto bound = std::find_if(runtime.begin(), runtime.end(), [&](const DimBound& b) { return b.dim == dim; });
    if (bound == runtime.end()) key += dim + "=" + std::to_string(problem.dim(dim)) + ";";
    else if (bound->bound) key += dim + "<=" + std::to_string(*bound->bound) + ";";
    else key += dim + "=any;";
  }
  return key;
}

bool gpu_dims_cover(std::string_view dims, const Problem& problem, Problem& compiled, double& slack) {
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

const GpuImage& VariantImages::choose(const KernelFamily& family, const Problem& problem, const Config& config,
                                      const SearchSpace& space, bool run_time_dims_binary, Problem& compiled) const {
  compiled = problem;
  if (!run_time_dims_binary) {
    const std::string key = gpu_variant_key(family, problem, config, space);
    if (const GpuImage* image = exact(key)) return *image;
    throw ConfigCannotRun(missing(family, problem, key));
  }
  if (const GpuImage* image = run_time_dims(gpu_key_prefix(family, problem.precision, config, space), problem, compiled))
    return *image;
  throw ConfigCannotRun("no run-time-dims binary of this config takes " + problem.describe());
}

namespace {

bool takes_run_time_dims(std::string_view dims) {
  return dims.find("<=") != std::string_view::npos || dims.find("=any") != std::string_view::npos;
}

}  // namespace

const GpuImage* VariantImages::exact(const std::string& key) const {
  for (const GpuImage& image : images)
    if (image.arch == arch && image.key == key) return &image;
  return nullptr;
}

const GpuImage* VariantImages::run_time_dims(const std::string& prefix, const Problem& problem, Problem& compiled) const {
  const GpuImage* best = nullptr;
  double best_slack = 0;
  for (const GpuImage& image : images) {
    if (image.arch != arch || image.key.substr(0, prefix.size()) != prefix) continue;
    const std::string_view dims = image.key.substr(prefix.size());
    Problem covered;
    double slack = 0;
    if (takes_run_time_dims(dims) && gpu_dims_cover(dims, problem, covered, slack) && (!best || slack < best_slack)) {
      best = &image;
      compiled = std::move(covered);
      best_slack = slack;
    }
  }
  return best;
}

std::vector<Config> VariantImages::run_time_dims_configs(const KernelFamily& family, const Problem& problem) const {
  const std::string prefix = gpu_key_prefix(family, problem.precision);
  std::vector<std::pair<double, Config>> found;
  for (const GpuImage& image : images) {
    if (image.arch != arch || image.key.substr(0, prefix.size()) != prefix) continue;
    const std::string_view dims = image.key.substr(image.key.rfind('|') + 1);
    Problem compiled;
    double slack = 0;
    if (takes_run_time_dims(dims) && gpu_dims_cover(dims, problem, compiled, slack))
      found.emplace_back(slack, Config::from_json(nlohmann::json::parse(image.config), "ktune::kernels"));
  }
  std::stable_sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<Config> configs;
  for (auto& [slack, config] : found) configs.push_back(std::move(config));
  return configs;
}

std::string VariantImages::missing(const KernelFamily& family, const Problem& problem, const std::string& key) const {
  const std::string prefix = gpu_key_prefix(family, problem.precision);
  const std::string wanted = key.substr(key.rfind('|') + 1);
  std::set<std::string> compiled;
  for (const GpuImage& image : images)
    if (image.arch == arch && image.key.substr(0, prefix.size()) == prefix)
      compiled.insert(std::string(image.key.substr(image.key.rfind('|') + 1)));
  // "b_layout=0;epilogue=1;" reads as "b_layout=0 epilogue=1".
  const auto readable = [](std::string dims) {
    while (!dims.empty() && dims.back() == ';') dims.pop_back();
    std::replace(dims.begin(), dims.end(), ';', ' ');
    return dims.empty() ? std::string("any") : dims;
  };
  std::string have;
  for (const auto& dims : compiled) have += (have.empty() ? "" : ", ") + readable(dims);
  if (!compiled.count(wanted))
    return "no " + std::string(backend) + " variant of " + family.name() + " (" + std::string(to_string(problem.precision)) +
           ") in this library was compiled for " + readable(wanted) + " (it has " + (have.empty() ? "none" : have) +
           "); tune this shape, export, and rebuild the library with KTUNE_TUNED_DIR";
  return "this config was not compiled into this library for " + std::string(arch);
}

std::string_view library_cuda_arch(int major, int minor) {
  // sm_90a code runs on sm_90 only; sm_80 code on every 8.x device (same major version).
  if (major == 9 && minor == 0) return "sm_90a";
  if (major == 8) return "sm_80";
  if (major > 9 || (major == 9 && minor > 0)) return "compute_80";
  return "";
}

}  // namespace ktune::library
