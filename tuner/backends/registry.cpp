#include "tuner/backends/registry.hpp"

#include "tuner/backends/cpu/cpu_backend.hpp"
#include "tuner/backends/variant_builder.hpp"
#ifdef KTUNE_HAVE_CUDA
#include "tuner/backends/cuda/cuda_backend.hpp"
#include "tuner/backends/cuda/cuda_driver.hpp"
#include "tuner/backends/cuda/nvrtc_compiler.hpp"
#endif
#ifdef KTUNE_HAVE_HIP
#include "tuner/backends/hip/hip_backend.hpp"
#include "tuner/backends/hip/hiprtc_compiler.hpp"
#endif
#ifdef KTUNE_HAVE_VULKAN
#include "tuner/backends/vulkan/vulkan_backend.hpp"
#include "tuner/backends/vulkan/vulkan_context.hpp"
#include "tuner/backends/vulkan/vulkan_shaders.hpp"
#endif
#include "kernels/cpu_kernel.hpp"
#include "tuner/core/errors.hpp"

namespace ktune {

std::vector<std::string> known_backend_names() { return {"cpu", "cuda", "hip", "vulkan"}; }

bool backend_built(const std::string& name) {
#ifdef KTUNE_HAVE_CUDA
  if (name == "cuda") return true;
#endif
#ifdef KTUNE_HAVE_HIP
  if (name == "hip") return true;
#endif
#ifdef KTUNE_HAVE_VULKAN
  if (name == "vulkan") return true;
#endif
  return name == "cpu";
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
  if (!backend_built(name))
    throw BackendUnavailable("the " + name + " backend is not part of this build of ktune (built backends: " +
                             join_names(built_backend_names()) + "); "
                             "reconfigure with -DKTUNE_WITH_" + [&] {
                               std::string upper = name;
                               for (auto& ch : upper) ch = static_cast<char>(std::toupper(ch));
                               return upper;
                             }() + "=ON on a machine with its toolchain");
}

void require_backend_precision(const std::string& backend, Precision precision) {
#ifdef KTUNE_HAVE_VULKAN
  if (backend == "vulkan") require_vulkan_precision(precision);
#endif
  (void)backend, (void)precision;
}

std::string best_available_backend() {
#ifdef KTUNE_HAVE_CUDA
  // A GPU counts as present when the driver loads and reports a device; asked in-process, since
  // no kernel runs and a missing driver is an answer, not a crash.
  try {
    const CudaDriver& cu = CudaDriver::get();
    int count = 0;
    if (cu.cuDeviceGetCount(&count) == CUDA_SUCCESS && count > 0) return "cuda";
  } catch (const BackendUnavailable&) {
  }
#endif
#ifdef KTUNE_HAVE_HIP
  if (hip_device_count() > 0) return "hip";
#endif
#ifdef KTUNE_HAVE_VULKAN
  // A GPU only: lavapipe (Mesa's CPU Vulkan) is slower than the CPU backend on the same cores.
  if (vulkan_gpu_present()) return "vulkan";
#endif
  return "cpu";
}

int device_count(const std::string& backend) {
  require_backend_built(backend);
  if (backend == "cpu") return 1;
#ifdef KTUNE_HAVE_CUDA
  if (backend == "cuda") {
    try {
      int count = 0;
      if (CudaDriver::get().cuDeviceGetCount(&count) == CUDA_SUCCESS) return count;
    } catch (const BackendUnavailable&) {
    }
  }
#endif
#ifdef KTUNE_HAVE_HIP
  if (backend == "hip") return hip_device_count();
#endif
#ifdef KTUNE_HAVE_VULKAN
  if (backend == "vulkan") return vulkan_device_count();
#endif
  return 0;
}

bool has_implementation(const KernelFamily& family, const std::string& backend) {
  if (!backend_built(backend)) return false;
  if (backend == "cpu") return family.cpu_kernel() != nullptr;
  if (backend == "cuda") return family.cuda_source() != nullptr;
  if (backend == "hip") return family.hip_source() != nullptr;
  if (backend == "vulkan") return family.vulkan_shader() != nullptr;
  return false;
}

std::string kernel_source_hash(const KernelFamily& family, const std::string& backend) {
  require_backend_built(backend);
  if (backend == "cpu") {
    if (const CpuKernel* kernel = family.cpu_kernel()) return kernel->source_hash();
  }
#ifdef KTUNE_HAVE_CUDA
  if (backend == "cuda" && family.cuda_source()) return NvrtcCompiler::source_hash(family);
#endif
#ifdef KTUNE_HAVE_HIP
  if (backend == "hip" && family.hip_source()) return HiprtcCompiler::source_hash(family);
#endif
#ifdef KTUNE_HAVE_VULKAN
  if (backend == "vulkan" && family.vulkan_shader()) return vulkan_source_hash(family);
#endif
  throw InputError("kernel '" + family.name() + "' has no " + backend + " implementation");
}

std::unique_ptr<Backend> open_backend(const std::string& name, int device_index) {
  require_backend_built(name);
#ifdef KTUNE_HAVE_CUDA
  if (name == "cuda") return std::make_unique<CudaBackend>(device_index);
#endif
#ifdef KTUNE_HAVE_HIP
  if (name == "hip") return std::make_unique<HipBackend>(device_index);
#endif
#ifdef KTUNE_HAVE_VULKAN
  if (name == "vulkan") return std::make_unique<VulkanBackend>(device_index);
#endif
  if (device_index != 0)
    throw BackendUnavailable("the cpu backend has one device (index 0), not " + std::to_string(device_index));
  return std::make_unique<CpuBackend>();
}

DeviceInfo nominal_device(const std::string& backend, const std::string& arch) {
  require_backend_built(backend);
#ifdef KTUNE_HAVE_CUDA
  if (backend == "cuda") return nominal_cuda_device(arch);
#endif
#ifdef KTUNE_HAVE_HIP
  if (backend == "hip") return nominal_hip_device(arch);
#endif
#ifdef KTUNE_HAVE_VULKAN
  if (backend == "vulkan") return nominal_vulkan_device(arch);
#endif
  (void)arch;  // only the GPU backends built in read it
  throw InputError("--arch (a nominal device) applies to GPU backends, not " + backend);
}

std::unique_ptr<VariantBuilder> make_variant_builder(const std::string& backend, const KernelFamily& family,
                                                     const Problem& problem, const std::string& arch, int threads,
                                                     BuildEffort effort, const std::vector<std::string>& launch_only) {
#ifdef KTUNE_HAVE_CUDA
  if (backend == "cuda") return make_cuda_variant_builder(family, problem, arch, threads, effort, launch_only);
#endif
#ifdef KTUNE_HAVE_HIP
  if (backend == "hip") return make_hip_variant_builder(family, problem, arch, threads, effort, launch_only);
#endif
#ifdef KTUNE_HAVE_VULKAN
  // SPIR-V has no target architecture and one optimization level (the driver's).
  if (backend == "vulkan") return make_vulkan_variant_builder(family, problem, threads, launch_only);
#endif
  (void)family, (void)problem, (void)arch, (void)threads, (void)effort, (void)launch_only;
  if (backend != "cpu") require_backend_built(backend);
  return nullptr;
}

}  // namespace ktune
