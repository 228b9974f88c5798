// The backends this build of the library has, in the order a default Context tries them.
#include "library/src/executors.hpp"

#include "tuner/core/errors.hpp"
#ifdef KTUNE_LIBRARY_WITH_VULKAN
#include "tuner/backends/vulkan/vulkan_context.hpp"
#endif

namespace ktune::library {

const std::vector<ExecutorFactory>& executor_factories() {
  static const std::vector<ExecutorFactory> factories = {
#ifdef KTUNE_LIBRARY_WITH_CUDA
      {kernels::Backend::cuda, make_cuda_executor},
#endif
#ifdef KTUNE_LIBRARY_WITH_HIP
      {kernels::Backend::hip, make_hip_executor},
#endif
#ifdef KTUNE_LIBRARY_WITH_VULKAN
      {kernels::Backend::vulkan, make_vulkan_executor, vulkan_gpu_present},
#endif
      {kernels::Backend::cpu, [](int device) {
         if (device != 0) throw BackendUnavailable("the CPU backend has one device, 0");
         return make_cpu_executor();
       }},
  };
  return factories;
}

}  // namespace ktune::library
