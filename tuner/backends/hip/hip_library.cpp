#include "tuner/backends/hip/hip_library.hpp"

#include <dlfcn.h>

#include <mutex>

#include "tuner/core/errors.hpp"

namespace ktune {
namespace {

// The HIP runtime of ROCm 5 (Debian 12's libamdhip64-5) and of ROCm 6.
constexpr const char* kRuntimeNames[] = {"libamdhip64.so.5", "libamdhip64.so.6", "libamdhip64.so"};
// hiprtc moved out of the runtime into its own library in ROCm 6.
constexpr const char* kHiprtcNames[] = {"libhiprtc.so.6", "libhiprtc.so"};

void* open_first(const char* const* names, std::size_t count, std::string& errors) {
  for (std::size_t i = 0; i < count; ++i) {
    if (void* library = dlopen(names[i], RTLD_NOW | RTLD_LOCAL)) return library;
    errors += std::string(errors.empty() ? "" : "; ") + dlerror();
  }
  return nullptr;
}

struct Loaded {
  HipLibrary library;
  bool has_runtime = false, has_device_runtime = false;
  std::string runtime_failure, compiler_failure;
};

Loaded load() {
  Loaded loaded;
  HipLibrary& hip = loaded.library;
  std::string errors;
  void* runtime = open_first(kRuntimeNames, std::size(kRuntimeNames), errors);
  void* hiprtc = runtime && dlsym(runtime, "hiprtcCompileProgram") ? runtime
                                                                    : open_first(kHiprtcNames, std::size(kHiprtcNames), errors);
  if (!hiprtc) {
    loaded.compiler_failure =
        "hiprtc, the HIP run-time compiler, cannot be loaded (" + errors +
        "). Install ROCm's HIP runtime (on Debian 12: apt install libamdhip64-dev, which brings hiprtc 5.2).";
  } else {
#define KT_HIPRTC_FUNCTION(name)                                                                         \
  hip.name = reinterpret_cast<decltype(hip.name)>(dlsym(hiprtc, #name));                               \
  if (!hip.name && loaded.compiler_failure.empty())                                                    \
    loaded.compiler_failure = std::string("the hiprtc library lacks ") + #name + "; it is older than ROCm 5";
#include "tuner/backends/hip/hiprtc_functions.inc"
#undef KT_HIPRTC_FUNCTION
  }
  if (!runtime) {
    loaded.runtime_failure = "no HIP device: the HIP runtime libamdhip64 cannot be loaded (" + errors +
                             "). This machine has no ROCm.";
    return loaded;
  }
#define KT_HIP_FUNCTION(name)                                                                            \
  hip.name = reinterpret_cast<decltype(hip.name)>(dlsym(runtime, #name));                              \
  if (!hip.name && loaded.runtime_failure.empty())                                                     \
    loaded.runtime_failure = std::string("the HIP runtime lacks ") + #name + "; it is older than ROCm 5";
#include "tuner/backends/hip/hip_library_functions.inc"
#undef KT_HIP_FUNCTION
  hip.hipMalloc = reinterpret_cast<decltype(hip.hipMalloc)>(dlsym(runtime, "hipMalloc"));
  if (!hip.hipMalloc && loaded.runtime_failure.empty()) loaded.runtime_failure = "the HIP runtime lacks hipMalloc";
  loaded.has_device_runtime = loaded.runtime_failure.empty();
  if (loaded.runtime_failure.empty() && !loaded.compiler_failure.empty())
    loaded.runtime_failure = loaded.compiler_failure;
  loaded.has_runtime = loaded.runtime_failure.empty();
  return loaded;
}

const Loaded& loaded() {
  static std::once_flag once;
  static Loaded result;
  std::call_once(once, [] { result = load(); });
  return result;
}

}  // namespace

bool HipError::sticky() const {
  switch (code_) {
    case hipErrorIllegalAddress:
    case hipErrorLaunchFailure:
    case hipErrorAssert:
    case hipErrorLaunchTimeOut:
    case hipErrorECCNotCorrectable:
      return true;
    default:
      return false;
  }
}

const HipLibrary& HipLibrary::runtime() {
  const Loaded& result = loaded();
  if (!result.has_runtime) throw BackendUnavailable(result.runtime_failure);
  return result.library;
}

const HipLibrary& HipLibrary::device_runtime() {
  const Loaded& result = loaded();
  if (!result.has_device_runtime) throw BackendUnavailable(result.runtime_failure);
  return result.library;
}

const HipLibrary& HipLibrary::compiler() {
  const Loaded& result = loaded();
  if (!result.compiler_failure.empty()) throw BackendUnavailable(result.compiler_failure);
  return result.library;
}

std::string HipLibrary::error_text(hipError_t code) const {
  const char* name = hipGetErrorName ? hipGetErrorName(code) : nullptr;
  const char* text = hipGetErrorString ? hipGetErrorString(code) : nullptr;
  const std::string error = name ? name : "hipErrorUnknown";
  // ROCm 5's runtime describes some errors by their name alone.
  if (!text || error == text) return error;
  return error + ": " + text;
}

void HipLibrary::check(hipError_t code, const char* call, const char* file, int line) const {
  if (code == hipSuccess) return;
  throw HipError(code, error_text(code) + " in " + call + " (" + file + ":" + std::to_string(line) + ")");
}

}  // namespace ktune
