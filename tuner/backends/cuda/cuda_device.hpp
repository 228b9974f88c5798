// What ktune knows of a CUDA device: its description (name, architecture, the limits search
// spaces read, the fingerprint results are stored under), and the architecture its kernels are
// compiled for. Shared by the tuner's CUDA backend and the kernel library, so both see a device
// the same way; needs the driver only (no NVRTC).
#pragma once

#include <cuda.h>

#include <string>

#include "tuner/core/device.hpp"

namespace ktune {

// The description of `device` (its context need not be current). BackendUnavailable without a
// driver; CudaError when a query fails.
DeviceInfo describe_cuda_device(CUdevice device);
// Limits of a typical GPU of `arch` (e.g. sm_90a: an H100/H200), for building constrained
// spaces when compiling without a GPU (--compile-only).
DeviceInfo nominal_cuda_device(const std::string& arch);
// The architecture ktune compiles for on a device of compute capability major.minor:
// sm_90a on Hopper and sm_100a on Blackwell (their arch-specific instructions), sm_XY elsewhere.
std::string compile_arch(int major, int minor);
// wgmma and setmaxnreg exist only in the arch-specific sm_90a target (the has_wgmma limit).
bool compile_arch_has_wgmma(const std::string& arch);

}  // namespace ktune
