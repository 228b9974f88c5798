// CUDA device memory as DeviceBuffer and DeviceProblem (tuner/backends/device_problem.hpp) take
// it: the driver's allocations and copies. Shared by the CUDA backend's problem state and its
// on-device output check.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <optional>

#include "tuner/backends/cuda/cuda_driver.hpp"
#include "tuner/backends/device_problem.hpp"

namespace ktune {

struct CudaMemory {
  using Pointer = CUdeviceptr;
  static CUdeviceptr allocate(std::size_t bytes) {
    CUdeviceptr pointer = 0;
    KT_CU(cuMemAlloc(&pointer, bytes));
    return pointer;
  }
  static std::optional<CUdeviceptr> allocate_unless_full(std::size_t bytes) {
    CUdeviceptr pointer = 0;
    const CUresult allocated = CudaDriver::get().cuMemAlloc(&pointer, bytes);
    if (allocated == CUDA_ERROR_OUT_OF_MEMORY) return std::nullopt;
    CudaDriver::get().check(allocated, "cuMemAlloc", __FILE__, __LINE__);
    return pointer;
  }
  static void release(CUdeviceptr pointer) noexcept { CudaDriver::get().cuMemFree(pointer); }
  static void upload(CUdeviceptr to, const void* from, std::size_t bytes) { KT_CU(cuMemcpyHtoD(to, from, bytes)); }
  static void copy(CUdeviceptr to, CUdeviceptr from, std::size_t bytes) { KT_CU(cuMemcpyDtoD(to, from, bytes)); }
  static void zero(CUdeviceptr pointer, std::size_t bytes) { KT_CU(cuMemsetD8(pointer, 0, bytes)); }
  static void poison(CUdeviceptr pointer, std::size_t bytes) { KT_CU(cuMemsetD8(pointer, 0xFF, bytes)); }
  static void copy_queued(CUdeviceptr to, CUdeviceptr from, std::size_t bytes) {
    KT_CU(cuMemcpyDtoDAsync(to, from, bytes, nullptr));
  }
};

using CudaBuffer = DeviceBuffer<CudaMemory>;

}  // namespace ktune
