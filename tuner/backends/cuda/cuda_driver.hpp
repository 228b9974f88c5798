// The CUDA driver API, loaded at run time from libcuda.so.1. ktune links no driver library, so
// one binary runs on machines without an NVIDIA driver (CPU tuning, NVRTC compile checks) and
// says plainly that no CUDA device is present when asked for one.
//
//   const CudaDriver& cu = CudaDriver::get();     // BackendUnavailable when there is no driver
//   KT_CU(cu.cuMemAlloc(&ptr, bytes));             // CudaError with the call text on failure
#pragma once

#include <cuda.h>

#include <stdexcept>
#include <string>

namespace ktune {

// A failed driver call: the call's text, the error's name and description.
class CudaError : public std::runtime_error {
 public:
  CudaError(CUresult code, const std::string& message) : std::runtime_error(message), code_(code) {}
  CUresult code() const { return code_; }
  // Errors after which the context is unusable: the worker must end.
  bool sticky() const;

 private:
  CUresult code_;
};

struct CudaDriver {
#define KT_CU_FUNCTION(name) decltype(&::name) name = nullptr;
#include "tuner/backends/cuda/cuda_driver_functions.inc"
#undef KT_CU_FUNCTION

  // Loads the driver once; throws BackendUnavailable saying what is missing.
  static const CudaDriver& get();
  std::string error_text(CUresult code) const;  // "CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access..."
  void check(CUresult code, const char* call, const char* file, int line) const;
};

}  // namespace ktune

#define KT_CU(call) ::ktune::CudaDriver::get().check(::ktune::CudaDriver::get().call, #call, __FILE__, __LINE__)
