// The Vulkan backend as the registry sees it: SPIR-V shaders, devices through the Vulkan loader
// (opened at run time). Lavapipe, Mesa's CPU driver, is a device but not a GPU.
#include "tuner/backends/backend_provider.hpp"
#include "tuner/backends/vulkan/vulkan_backend.hpp"
#include "tuner/backends/vulkan/vulkan_context.hpp"
#include "tuner/backends/vulkan/vulkan_shaders.hpp"

namespace ktune {
namespace {

class VulkanProvider final : public BackendProvider {
 public:
  std::string name() const override { return "vulkan"; }
  // A GPU only: lavapipe is slower than the CPU backend on the same cores.
  bool gpu_present() const override { return vulkan_gpu_present(); }
  int device_count() const override { return vulkan_device_count(); }
  bool has_implementation(const KernelFamily& family) const override { return family.vulkan_shader() != nullptr; }
  std::string source_hash(const KernelFamily& family) const override { return vulkan_source_hash(family); }
  void require_precision(Precision precision) const override { require_vulkan_precision(precision); }
  std::unique_ptr<Backend> open(int device_index) const override { return std::make_unique<VulkanBackend>(device_index); }
  DeviceInfo nominal_device(const std::string& arch) const override { return nominal_vulkan_device(arch); }
  // SPIR-V has no target architecture and one optimization level (the driver's).
  std::unique_ptr<VariantBuilder> variant_builder(const KernelFamily& family, const Problem& problem,
                                                  const std::string&, int threads, BuildEffort,
                                                  const std::vector<std::string>& launch_only) const override {
    return make_vulkan_variant_builder(family, problem, threads, launch_only);
  }
};

}  // namespace

const BackendProvider& vulkan_backend_provider() {
  static const VulkanProvider provider;
  return provider;
}

}  // namespace ktune
