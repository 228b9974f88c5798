// The HIP runtime and hiprtc, loaded at run time (libamdhip64; libhiprtc on ROCm 6). ktune links
// no ROCm library, so one binary runs on machines without ROCm, compile-checks HIP variants
// wherever hiprtc is installed (no AMD GPU needed), and says plainly what is missing otherwise.
//
//   const HipLibrary& hip = HipLibrary::runtime();   // BackendUnavailable without the runtime
//   KT_HIP(hipMemsetD8(pointer, 0, bytes));          // HipError with the call text on failure
//   const HipLibrary& rtc = HipLibrary::compiler();  // hiprtc only (no device needed)
#pragma once

#include <hip/hip_runtime_api.h>
#include <hip/hiprtc.h>

#include <stdexcept>
#include <string>

namespace ktune {

// A failed runtime call: the call's text, the error's name and description.
class HipError : public std::runtime_error {
 public:
  HipError(hipError_t code, const std::string& message) : std::runtime_error(message), code_(code) {}
  hipError_t code() const { return code_; }
  // Errors after which the device is unusable: the worker must end.
  bool sticky() const;

 private:
  hipError_t code_;
};

struct HipLibrary {
#define KT_HIP_FUNCTION(name) decltype(&::name) name = nullptr;
#define KT_HIPRTC_FUNCTION(name) decltype(&::name) name = nullptr;
#include "tuner/backends/hip/hip_library_functions.inc"
#include "tuner/backends/hip/hiprtc_functions.inc"
#undef KT_HIP_FUNCTION
#undef KT_HIPRTC_FUNCTION
  // hipMalloc is overloaded by templates in the header: its C signature is spelled out.
  hipError_t (*hipMalloc)(void** pointer, size_t bytes) = nullptr;

  // The runtime and hiprtc; BackendUnavailable saying what is missing.
  static const HipLibrary& runtime();
  // The runtime alone (its hiprtc functions may be missing): what running compiled code objects
  // needs (ktune::kernels); BackendUnavailable without it.
  static const HipLibrary& device_runtime();
  // hiprtc alone (its runtime functions may be missing); BackendUnavailable without hiprtc.
  static const HipLibrary& compiler();
  std::string error_text(hipError_t code) const;  // "hipErrorNoDevice: no ROCm-capable device..."
  void check(hipError_t code, const char* call, const char* file, int line) const;
};

}  // namespace ktune

#define KT_HIP(call) ::ktune::HipLibrary::runtime().check(::ktune::HipLibrary::runtime().call, #call, __FILE__, __LINE__)
// The same on the runtime alone (no hiprtc needed).
#define KT_HIP_RUNTIME(call) \
  ::ktune::HipLibrary::device_runtime().check(::ktune::HipLibrary::device_runtime().call, #call, __FILE__, __LINE__)
