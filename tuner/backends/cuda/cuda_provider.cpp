// The CUDA backend as the registry sees it: NVRTC-compiled sources, devices through the driver
// (loaded at run time, so a machine without one answers "no device").
#include "tuner/backends/backend_provider.hpp"
#include "tuner/backends/cuda/cuda_backend.hpp"
#include "tuner/backends/cuda/cuda_driver.hpp"
#include "tuner/backends/cuda/nvrtc_compiler.hpp"
#include "tuner/backends/cuda/nvrtc_library.hpp"
#include "tuner/core/errors.hpp"

namespace ktune {
namespace {

class CudaProvider final : public BackendProvider {
 public:
  std::string name() const override { return "cuda"; }
  bool gpu_present() const override { return device_count() > 0; }
  int device_count() const override {
    try {
      int count = 0;
      if (CudaDriver::get().cuDeviceGetCount(&count) == CUDA_SUCCESS) return count;
    } catch (const BackendUnavailable&) {
    }
    return 0;
  }
  bool has_implementation(const KernelFamily& family) const override { return family.cuda_source() != nullptr; }
  std::string source_hash(const KernelFamily& family) const override {
    return RuntimeCompiler::source_hash(family, GpuApi::cuda);
  }
  std::unique_ptr<Backend> open(int device_index) const override { return std::make_unique<CudaBackend>(device_index); }
  DeviceInfo nominal_device(const std::string& arch) const override { return nominal_cuda_device(arch); }
  nlohmann::json compiler() const override {
    try {
      const std::string library = NvrtcLibrary::get().path;
      return {{"name", "NVRTC"}, {"version", NvrtcCompiler::nvrtc_version()}, {"library", library}};
    } catch (const BackendUnavailable& e) {
      return {{"name", "NVRTC"}, {"missing", e.what()}};
    }
  }
  std::unique_ptr<VariantBuilder> variant_builder(const KernelFamily& family, const Problem& problem,
                                                  const std::string& arch, int threads, BuildEffort effort,
                                                  const std::vector<std::string>& launch_only) const override {
    auto compiler =
        std::make_shared<const NvrtcCompiler>(arch, default_binary_cache_dir(), effort == BuildEffort::fast_check);
    return make_runtime_variant_builder(std::move(compiler), family, problem, threads, launch_only);
  }
};

}  // namespace

const BackendProvider& cuda_backend_provider() {
  static const CudaProvider provider;
  return provider;
}

}  // namespace ktune
