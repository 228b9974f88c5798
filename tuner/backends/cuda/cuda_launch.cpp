#include "tuner/backends/cuda/cuda_launch.hpp"

#include "tuner/backends/cuda/cuda_driver.hpp"

namespace ktune {

KernelGeometry KernelGeometry::from(const std::map<std::string, std::int64_t>& launch) {
  const auto value = [&](const char* name, std::int64_t fallback) {
    const auto found = launch.find(name);
    return static_cast<unsigned>(found == launch.end() ? fallback : found->second);
  };
  KernelGeometry geometry;
  geometry.grid[0] = value("grid_x", 1);
  geometry.grid[1] = value("grid_y", 1);
  geometry.grid[2] = value("grid_z", 1);
  geometry.block[0] = value("block_x", 1);
  geometry.block[1] = value("block_y", 1);
  geometry.block[2] = value("block_z", 1);
  geometry.shared_bytes = value("shared_bytes", 0);
  geometry.cluster_x = value("cluster_x", 1);
  return geometry;
}

void launch_kernel(CUfunction function, const KernelGeometry& geometry, void** arguments, CUstream stream) {
  if (geometry.cluster_x <= 1) {
    KT_CU(cuLaunchKernel(function, geometry.grid[0], geometry.grid[1], geometry.grid[2], geometry.block[0],
                         geometry.block[1], geometry.block[2], geometry.shared_bytes, stream, arguments, nullptr));
    return;
  }
  // A cluster dimension above 1 needs the extended launch (thread-block clusters, sm_90+).
  CUlaunchAttribute cluster{};
  cluster.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  cluster.value.clusterDim.x = geometry.cluster_x;
  cluster.value.clusterDim.y = 1;
  cluster.value.clusterDim.z = 1;
  CUlaunchConfig config{};
  config.gridDimX = geometry.grid[0];
  config.gridDimY = geometry.grid[1];
  config.gridDimZ = geometry.grid[2];
  config.blockDimX = geometry.block[0];
  config.blockDimY = geometry.block[1];
  config.blockDimZ = geometry.block[2];
  config.sharedMemBytes = geometry.shared_bytes;
  config.hStream = stream;
  config.attrs = &cluster;
  config.numAttrs = 1;
  KT_CU(cuLaunchKernelEx(&config, function, arguments, nullptr));
}

CUtensorMap encode_tensor_map(const TensorMapSpec& spec, std::span<const CUdeviceptr> tensors, CUdeviceptr workspace,
                              Precision precision, std::string& why) {
  CUtensorMap map{};
  CUdeviceptr pointer = 0;
  if (spec.tensor == TensorMapSpec::kWorkspace) {
    if (workspace == 0) {
      why = "it views the workspace, and the variant has none (launch.workspace_bytes)";
      return map;
    }
    pointer = workspace + static_cast<CUdeviceptr>(spec.workspace_offset);
  } else if (spec.tensor >= 0 && static_cast<std::size_t>(spec.tensor) < tensors.size()) {
    pointer = tensors[static_cast<std::size_t>(spec.tensor)];
  } else {
    why = "tensor " + std::to_string(spec.tensor) + " does not exist (the problem has " +
          std::to_string(tensors.size()) + ")";
    return map;
  }
  // tf32 tensors are floats already rounded on the host; fp8 moves as bytes.
  const CUtensorMapDataType type = precision == Precision::fp16       ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16
                                   : precision == Precision::bf16     ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                                   : precision == Precision::fp8_e4m3 ? CU_TENSOR_MAP_DATA_TYPE_UINT8
                                                                      : CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  const CUtensorMapSwizzle swizzle = spec.swizzle_bytes == 128  ? CU_TENSOR_MAP_SWIZZLE_128B
                                     : spec.swizzle_bytes == 64 ? CU_TENSOR_MAP_SWIZZLE_64B
                                     : spec.swizzle_bytes == 32 ? CU_TENSOR_MAP_SWIZZLE_32B
                                                                : CU_TENSOR_MAP_SWIZZLE_NONE;
  const cuuint64_t sizes[2] = {static_cast<cuuint64_t>(spec.cols), static_cast<cuuint64_t>(spec.rows)};
  const cuuint64_t row_stride[1] = {static_cast<cuuint64_t>(spec.cols) * static_cast<cuuint64_t>(element_bytes(precision))};
  const cuuint32_t box[2] = {static_cast<cuuint32_t>(spec.box_cols), static_cast<cuuint32_t>(spec.box_rows)};
  const cuuint32_t element_strides[2] = {1, 1};
  const CudaDriver& cu = CudaDriver::get();
  const CUresult status = cu.cuTensorMapEncodeTiled(
      &map, type, 2, reinterpret_cast<void*>(pointer), sizes, row_stride, box, element_strides,
      CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (status != CUDA_SUCCESS)
    why = "cuTensorMapEncodeTiled refused rows " + std::to_string(spec.rows) + ", cols " + std::to_string(spec.cols) +
          ", box " + std::to_string(spec.box_rows) + "x" + std::to_string(spec.box_cols) + ": " + cu.error_text(status);
  return map;
}

std::string tensor_map_target(const TensorMapSpec& spec) {
  if (spec.tensor == TensorMapSpec::kWorkspace) return "the workspace at byte " + std::to_string(spec.workspace_offset);
  return "tensor " + std::to_string(spec.tensor);
}

}  // namespace ktune
