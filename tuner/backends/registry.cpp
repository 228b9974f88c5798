#include "tuner/backends/registry.hpp"

#include <algorithm>
#include <cctype>

#include "tuner/backends/backend_provider.hpp"
#include "tuner/core/errors.hpp"

namespace ktune {
namespace {

// The provider of a built backend, or nullptr.
const BackendProvider* find_provider(const std::string& name) {
  for (const BackendProvider* provider : built_backend_providers())
    if (provider->name() == name) return provider;
  return nullptr;
}

// The provider of `name`; InputError or BackendUnavailable as require_backend_built says.
const BackendProvider& provider(const std::string& name) {
  require_backend_built(name);
  return *find_provider(name);
}

}  // namespace

std::vector<std::string> known_backend_names() { return {"cpu", "cuda", "hip", "vulkan"}; }

bool backend_built(const std::string& name) { return find_provider(name) != nullptr; }

nlohmann::json backend_compiler(const std::string& backend) {
  const BackendProvider* found = find_provider(backend);
  return found ? found->compiler() : nlohmann::json(nullptr);
}

std::vector<std::string> built_backend_names() {
  std::vector<std::string> names;
  for (const auto& name : known_backend_names())
    if (backend_built(name)) names.push_back(name);
  return names;
}

void require_backend_built(const std::string& name) {
  const auto names = known_backend_names();
  if (std::find(names.begin(), names.end(), name) == names.end())
    throw InputError("unknown backend '" + name + "'; valid backends: " + join_names(names));
  if (!backend_built(name)) {
    std::string upper = name;
    for (auto& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    throw BackendUnavailable("the " + name + " backend is not part of this build of ktune (built backends: " +
                             join_names(built_backend_names()) + "); reconfigure with -DKTUNE_WITH_" + upper +
                             "=ON on a machine with its toolchain");
  }
}

void require_backend_precision(const std::string& backend, Precision precision) {
  if (const BackendProvider* found = find_provider(backend)) found->require_precision(precision);
}

std::string best_available_backend() {
  for (const BackendProvider* provider : built_backend_providers())
    if (provider->gpu_present()) return provider->name();
  return "cpu";
}

int device_count(const std::string& backend) { return provider(backend).device_count(); }

bool has_implementation(const KernelFamily& family, const std::string& backend) {
  const BackendProvider* found = find_provider(backend);
  return found && found->has_implementation(family);
}

std::string kernel_source_hash(const KernelFamily& family, const std::string& backend) {
  const BackendProvider& found = provider(backend);
  if (!found.has_implementation(family))
    throw InputError("kernel '" + family.name() + "' has no " + backend + " implementation");
  return found.source_hash(family);
}

std::unique_ptr<Backend> open_backend(const std::string& name, int device_index) {
  return provider(name).open(device_index);
}

DeviceInfo nominal_device(const std::string& backend, const std::string& arch) {
  return provider(backend).nominal_device(arch);
}

std::unique_ptr<VariantBuilder> make_variant_builder(const std::string& backend, const KernelFamily& family,
                                                     const Problem& problem, const std::string& arch, int threads,
                                                     BuildEffort effort, const std::vector<std::string>& launch_only) {
  return provider(backend).variant_builder(family, problem, arch, threads, effort, launch_only);
}

}  // namespace ktune
