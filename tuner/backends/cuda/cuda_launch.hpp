// Launching a compiled CUDA kernel as ktune's search spaces describe it: the launch geometry
// (grid, block, dynamic shared memory, thread-block cluster) and the TMA descriptors a kernel
// takes by value. Shared by the tuner's CUDA backend and the kernel library.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <map>
#include <span>
#include <string>

#include "kernels/family.hpp"
#include "tuner/core/precision.hpp"

namespace ktune {

// The launch values of a space ("grid_x", "block_x", "shared_bytes", "cluster_x", ...), missing
// ones 1 (0 for shared_bytes).
struct KernelGeometry {
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
  unsigned shared_bytes = 0;
  unsigned cluster_x = 1;

  static KernelGeometry from(const std::map<std::string, std::int64_t>& launch);
};

// Launches `function` with `arguments` (cuLaunchKernel's kernelParams) on `stream`, as a
// thread-block cluster when cluster_x is above 1. CudaError when the driver refuses.
void launch_kernel(CUfunction function, const KernelGeometry& geometry, void** arguments, CUstream stream);

// A 2-D row-major tensor map for cp.async.bulk.tensor over one of `tensors` (the problem's, in
// kernel order) or the variant's `workspace` (0 when it has none), as spec says; `why` says what
// was refused (no workspace, unaligned row stride, box too large...), empty on success.
CUtensorMap encode_tensor_map(const TensorMapSpec& spec, std::span<const CUdeviceptr> tensors, CUdeviceptr workspace,
                              Precision precision, std::string& why);
// What a tensor map views, for messages: "tensor 3" or "the workspace at byte 0".
std::string tensor_map_target(const TensorMapSpec& spec);

}  // namespace ktune
