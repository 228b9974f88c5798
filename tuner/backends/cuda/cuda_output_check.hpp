// Compares a variant's outputs with their reference on the GPU, so that a config's outputs are
// not read back to the host at all: element by element as numpy's allclose does
// (KernelFamily::closeness; the same figure as stored_outputs_closeness in
// tuner/backends/output_check.hpp, computed in the same float64 arithmetic), or as the relative L2
// error of the built-in families (stored_outputs_error's figure, up to the order of additions). A T1 kernel's outputs are checked against the
// captured output of its default config: hundreds of MB a config, whose copy to the host took
// a third of the time a memory-bound config took to tune.
//
//   auto check = CudaOutputCheck::make(arch, why_not);    // nullptr when it cannot be compiled
//   double worst = check->closeness({{got, Precision::fp32, expected, n}}, atol, rtol);
//   double error = check->relative_l2({{got, Precision::bf16, expected, n}});
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
  // The largest relative L2 error of any output, as stored_outputs_error computes it (NaN for a
  // non-finite value); the same on every run. Synchronizes the context. CudaError from the driver.
  double relative_l2(const std::vector<DeviceOutput>& outputs);

 private:
  CudaOutputCheck() = default;
  CUmodule module_ = nullptr;
  CUdeviceptr result_ = 0;  // the worst ratio's bits, then the non-finite flag
  CUdeviceptr sums_ = 0;    // relative_l2: two sums per block
};

}  // namespace ktune
