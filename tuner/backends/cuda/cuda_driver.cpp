#include "tuner/backends/cuda/cuda_driver.hpp"

#include <dlfcn.h>

#include <mutex>

#include "tuner/core/errors.hpp"

namespace ktune {
namespace {

#define KT_STRINGIFY(x) #x
#define KT_SYMBOL(x) KT_STRINGIFY(x)  // expands cuda.h's renames first: cuMemAlloc -> "cuMemAlloc_v2"

CudaDriver load_driver() {
  void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!library)
    throw BackendUnavailable(
        "no CUDA device: the NVIDIA driver library libcuda.so.1 cannot be loaded (" + std::string(dlerror()) +
        "). This machine has no NVIDIA driver; the CUDA runtime reports this as error 35, "
        "cudaErrorInsufficientDriver ('CUDA driver version is insufficient for CUDA runtime version').");
  CudaDriver driver;
#define KT_CU_FUNCTION(name)                                                                   \
  driver.name = reinterpret_cast<decltype(driver.name)>(dlsym(library, KT_SYMBOL(name)));      \
  if (!driver.name)                                                                            \
    throw BackendUnavailable(std::string("the NVIDIA driver lacks ") + KT_SYMBOL(name) +       \
                             "; it is older than the CUDA 12 API ktune needs");
#include "tuner/backends/cuda/cuda_driver_functions.inc"
#undef KT_CU_FUNCTION
  const CUresult init = driver.cuInit(0);
  if (init != CUDA_SUCCESS) {
    const char* name = nullptr;
    driver.cuGetErrorName(init, &name);
    throw BackendUnavailable(std::string("no CUDA device: cuInit failed with ") + (name ? name : "an unknown error") +
                             (init == CUDA_ERROR_NO_DEVICE ? " (the driver is there but sees no GPU)" : ""));
  }
  return driver;
}

}  // namespace

bool CudaError::sticky() const {
  switch (code_) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ECC_UNCORRECTABLE:
      return true;
    default:
      return false;
  }
}

const CudaDriver& CudaDriver::get() {
  static std::once_flag once;
  static CudaDriver driver;
  static std::string failure;
  std::call_once(once, [] {
    try {
      driver = load_driver();
    } catch (const BackendUnavailable& e) {
      failure = e.what();
    }
  });
  if (!failure.empty()) throw BackendUnavailable(failure);
  return driver;
}

std::string CudaDriver::error_text(CUresult code) const {
  const char* name = nullptr;
  const char* text = nullptr;
  cuGetErrorName(code, &name);
  cuGetErrorString(code, &text);
  return std::string(name ? name : "CUDA_ERROR_UNKNOWN") + ": " + (text ? text : "unknown error");
}

void CudaDriver::check(CUresult code, const char* call, const char* file, int line) const {
  if (code == CUDA_SUCCESS) return;
  throw CudaError(code, error_text(code) + " in " + call + " (" + file + ":" + std::to_string(line) + ")");
}

}  // namespace ktune
