// The CUDA backend (worker side): loads NVRTC-compiled CUBINs through the driver API, keeps the
// problem's tensors on the device, verifies each variant against the float64 reference and
// times it with CUDA events, flushing L2 between samples of memory-bound kernels.
#pragma once

#include <memory>

#include "tuner/backends/backend.hpp"
#include "tuner/backends/cuda/cuda_device.hpp"

namespace ktune {

class CudaBackend final : public Backend {
 public:
  explicit CudaBackend(int device_index);  // BackendUnavailable when there is no such device
  ~CudaBackend() override;
  const DeviceInfo& device() const override;
  using Backend::evaluate;
  EvaluationResult evaluate(const KernelFamily& family, const Problem& problem, const Config& config,
                            const VariantBuild& build, const MeasureSettings& settings) override;
  bool healthy() const override;
  bool reference_ready() const override;
  void prepare(const KernelFamily& family, const Problem& problem, std::uint64_t seed) override;

  struct Impl;  // the device, the problem loaded and the measurement target (cuda_backend.cpp)

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace ktune
