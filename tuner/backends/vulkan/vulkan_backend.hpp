// The Vulkan backend (worker side): loads a variant's SPIR-V, creates its compute pipeline with
// the config's specialization constants, keeps the problem's tensors in device buffers bound by
// one descriptor set (reused by every config of the problem), and runs each variant through the
// measurement engine (tuner/measure/engine.hpp): verified against the float64 reference, then
// timed in batches of samples, each batch one command buffer of timestamped dispatches (caches
// evicted between the samples of memory-bound kernels) submitted and waited for once. Runs on
// lavapipe (Mesa's CPU Vulkan) in CI and on GPU drivers.
#pragma once

#include <filesystem>
#include <memory>
#include <vector>

#include "tuner/backends/backend.hpp"
#include "tuner/backends/variant_builder.hpp"

namespace ktune {

class VulkanBackend final : public Backend {
 public:
  explicit VulkanBackend(int device_index);  // BackendUnavailable when there is no such device
  ~VulkanBackend() override;
  const DeviceInfo& device() const override;
  using Backend::evaluate;
  EvaluationResult evaluate(const KernelFamily& family, const Problem& problem, const Config& config,
                            const VariantBuild& build, const MeasureSettings& settings) override;
  bool healthy() const override;
  void prepare(const KernelFamily& family, const Problem& problem, std::uint64_t seed) override;

  struct Impl;  // the device, the problem loaded and the measurement target (vulkan_backend.cpp)

 private:
  std::unique_ptr<Impl> impl_;
};

// The SPIR-V module of a config, in `cache_dir` (see variant_builder.cpp). `compile_time_config`
// holds only the config's compile-time parameters.
BuiltVariant build_vulkan_variant(const KernelFamily& family, const Problem& problem, const Config& compile_time_config,
                                  const std::filesystem::path& cache_dir);
// The build pool for the tuner (see tuner/backends/variant_builder.hpp).
std::unique_ptr<VariantBuilder> make_vulkan_variant_builder(const KernelFamily& family, const Problem& problem,
                                                            int threads, const std::vector<std::string>& launch_only);

}  // namespace ktune
