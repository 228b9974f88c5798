// Compares a variant's outputs with their reference on the GPU, element by element as numpy's
// allclose does (KernelFamily::closeness; the same figure as stored_outputs_closeness in
// tuner/backends/output_check.hpp, computed in the same float64 arithmetic), so that a config's
// outputs are not read back to the host at all. A T1 kernel's outputs are checked against the
// captured output of its default config: hundreds of MB a config, whose copy to the host took
// a third of the time a memory-bound config took to tune.
//
//   auto check = CudaOutputCheck::make(arch, why_not);    // nullptr when it cannot be compiled
//   double worst = check->closeness({{got, Precision::fp32, expected, n}}, atol, rtol);
#pragma once

#include <cuda.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "tuner/core/precision.hpp"

namespace ktune {

struct DeviceOutput {
  CUdeviceptr got;       // elements stored in `precision`
  Precision precision;
  CUdeviceptr expected;  // `count` doubles; NaN marks an element that is not checked
  std::size_t count;
};

class CudaOutputCheck {
 public:
  // Compiles the comparison kernels with NVRTC for `arch` (cached beside the variants), loads
  // them into the current context. nullptr, with the reason in `why_not`, when that fails.
  static std::unique_ptr<CudaOutputCheck> make(const std::string& arch, std::string& why_not);
  ~CudaOutputCheck();
  CudaOutputCheck(const CudaOutputCheck&) = delete;
  CudaOutputCheck& operator=(const CudaOutputCheck&) = delete;

  // The kernels' image for `arch` (CUBIN, or PTX for a compute_ architecture), compiled once per
  // NVRTC version and architecture into the binary cache; empty, with `why_not`, when NVRTC
  // fails. Needs no GPU.
  static std::string image(const std::string& arch, std::string& why_not);
  // The storage types it reads exactly as the host check does (not tf32 or fp8).
  static bool supports(Precision precision);
  // The largest |got - expected| / (atol + rtol |expected|) over every checked element of every
  // output (1 or below passes); NaN when a stored value is NaN or infinite where the reference
  // is not that same value. Synchronizes the context. CudaError from the driver.
  double closeness(const std::vector<DeviceOutput>& outputs, double atol, double rtol);

 private:
  CudaOutputCheck() = default;
  CUmodule module_ = nullptr;
  CUdeviceptr result_ = 0;  // the worst ratio's bits, then the non-finite flag
};

}  // namespace ktune
