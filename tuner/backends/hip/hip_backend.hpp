// The HIP backend (worker side, AMD GPUs): loads hiprtc-compiled code objects through the HIP
// module API, keeps the problem's tensors on the device and runs each variant through the
// measurement engine (tuner/measure/engine.hpp), which verifies it against the float64 reference
// and times it with batches of HIP events, flushing L2 between samples of memory-bound kernels.
// Built and compile-checked here; no AMD GPU has run it yet (README).
#pragma once

#include <memory>

#include "tuner/backends/backend.hpp"
#include "tuner/backends/hip/hip_device.hpp"

namespace ktune {

class HipBackend final : public Backend {
 public:
  explicit HipBackend(int device_index);  // BackendUnavailable when there is no such device
  ~HipBackend() override;
  const DeviceInfo& device() const override;
  using Backend::evaluate;
  EvaluationResult evaluate(const KernelFamily& family, const Problem& problem, const Config& config,
                            const VariantBuild& build, const MeasureSettings& settings) override;
  bool healthy() const override;
  void prepare(const KernelFamily& family, const Problem& problem, std::uint64_t seed) override;

  struct Impl;  // the device, the problem loaded and the measurement target (hip_backend.cpp)

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace ktune
