// Device memory owned by one object and freed when it goes (the no-throw release suits
// destructors). Shared by the CUDA backend's problem state and its on-device output check.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <optional>
#include <utility>

#include "tuner/backends/cuda/cuda_driver.hpp"

namespace ktune {

struct DeviceBuffer {
  CUdeviceptr pointer = 0;
  std::size_t bytes = 0;
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t size) : bytes(size) { KT_CU(cuMemAlloc(&pointer, size == 0 ? 1 : size)); }
  DeviceBuffer(DeviceBuffer&& other) noexcept : pointer(other.pointer), bytes(other.bytes) { other.pointer = 0; }
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    std::swap(pointer, other.pointer);
    std::swap(bytes, other.bytes);
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() {
    if (pointer) CudaDriver::get().cuMemFree(pointer);
  }
  // nullopt when the device is out of memory (not sticky: the context stays usable); CudaError
  // for any other failure.
  static std::optional<DeviceBuffer> try_allocate(std::size_t size) {
    DeviceBuffer buffer;
    const CUresult allocated = CudaDriver::get().cuMemAlloc(&buffer.pointer, size == 0 ? 1 : size);
    if (allocated == CUDA_ERROR_OUT_OF_MEMORY) {
      buffer.pointer = 0;
      return std::nullopt;
    }
    CudaDriver::get().check(allocated, "cuMemAlloc", __FILE__, __LINE__);
    buffer.bytes = size;
    return buffer;
  }
};

}  // namespace ktune
