// The HIP backend as the registry sees it: hiprtc-compiled portable sources, devices through
// the HIP runtime (loaded at run time).
#include "tuner/backends/backend_provider.hpp"
#include "tuner/backends/hip/hip_backend.hpp"
#include "tuner/backends/hip/hiprtc_compiler.hpp"
#include "tuner/core/errors.hpp"

namespace ktune {
namespace {

class HipProvider final : public BackendProvider {
 public:
  std::string name() const override { return "hip"; }
  bool gpu_present() const override { return hip_device_count() > 0; }
  int device_count() const override { return hip_device_count(); }
  bool has_implementation(const KernelFamily& family) const override { return family.hip_source() != nullptr; }
  std::string source_hash(const KernelFamily& family) const override {
    return RuntimeCompiler::source_hash(family, GpuApi::hip);
  }
  std::unique_ptr<Backend> open(int device_index) const override { return std::make_unique<HipBackend>(device_index); }
  DeviceInfo nominal_device(const std::string& arch) const override { return nominal_hip_device(arch); }
  nlohmann::json compiler() const override {
    try {
      return {{"name", "hiprtc"}, {"version", HiprtcCompiler::hiprtc_version()}};
    } catch (const BackendUnavailable& e) {
      return {{"name", "hiprtc"}, {"missing", e.what()}};
    }
  }
  std::unique_ptr<VariantBuilder> variant_builder(const KernelFamily& family, const Problem& problem,
                                                  const std::string& arch, int threads, BuildEffort effort,
                                                  const std::vector<std::string>& launch_only) const override {
    auto compiler =
        std::make_shared<const HiprtcCompiler>(arch, default_binary_cache_dir(), effort == BuildEffort::fast_check);
    return make_runtime_variant_builder(std::move(compiler), family, problem, threads, launch_only);
  }
};

}  // namespace

const BackendProvider& hip_backend_provider() {
  static const HipProvider provider;
  return provider;
}

}  // namespace ktune
