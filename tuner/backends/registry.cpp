#include "tuner/backends/registry.hpp"

#include "tuner/backends/cpu/cpu_backend.hpp"
#include "tuner/backends/cpu/cpu_kernel.hpp"
#include "tuner/core/errors.hpp"

namespace ktune {

std::vector<std::string> known_backend_names() { return {"cpu", "cuda", "hip", "vulkan"}; }

bool backend_built(const std::string& name) { return name == "cpu"; }

void require_backend_built(const std::string& name) {
  const auto names = known_backend_names();
  if (std::find(names.begin(), names.end(), name) == names.end())
    throw InputError("unknown backend '" + name + "'; valid backends: " + join_names(names));
  if (!backend_built(name))
    throw BackendUnavailable("the " + name + " backend is not part of this build of ktune (built backends: cpu); "
                             "reconfigure with -DKTUNE_WITH_" + [&] {
                               std::string upper = name;
                               for (auto& ch : upper) ch = static_cast<char>(std::toupper(ch));
                               return upper;
                             }() + "=ON on a machine with its toolchain");
}

std::string best_available_backend() { return "cpu"; }

std::string kernel_source_hash(const KernelFamily& family, const std::string& backend) {
  require_backend_built(backend);
  if (backend == "cpu") {
    if (const CpuKernel* kernel = family.cpu_kernel()) return kernel->source_hash();
  }
  throw InputError("kernel '" + family.name() + "' has no " + backend + " implementation");
}

std::unique_ptr<Backend> open_backend(const std::string& name, int device_index) {
  require_backend_built(name);
  if (device_index != 0)
    throw BackendUnavailable("the cpu backend has one device (index 0), not " + std::to_string(device_index));
  return std::make_unique<CpuBackend>();
}

}  // namespace ktune
