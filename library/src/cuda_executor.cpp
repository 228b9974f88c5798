// The CUDA backend of the library: the driver opened at run time (tuner/backends/cuda/
// cuda_driver.hpp: no libcuda at link time, so the library loads on machines without a GPU),
// device memory in the device's primary context (shared with the CUDA runtime, so a project's
// own cudaMalloc'd buffers and streams work), and variants compiled ahead of time
// (gpu_variants.hpp). A config the caller asks for that the library does not carry is compiled
// with NVRTC, opened at run time too, for the architecture a tune on this GPU compiles for
// (run_time_images.hpp); otherwise a config with no compiled variant cannot run (the caller
// falls back to one that has).
#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "library/src/gpu_variants.hpp"
#include "library/src/gpu_executor.hpp"
#include "library/src/executors.hpp"
#include "library/src/stream_workspaces.hpp"
#include "tuner/backends/cuda/cuda_device.hpp"
#include "tuner/backends/cuda/cuda_driver.hpp"
#include "tuner/backends/cuda/cuda_launch.hpp"
#include "tuner/backends/cuda/nvrtc_compiler.hpp"
#include "tuner/backends/gpu_source.hpp"
#include "tuner/core/errors.hpp"
#include "tuner/core/space_context.hpp"

namespace ktune::library {
namespace {

class CudaExecutor final : public GpuExecutor {
 public:
  explicit CudaExecutor(int index) {
    if (cuda_images().empty())
      throw BackendUnavailable("this build of ktune::kernels has no CUDA variants compiled in (configure it with "
                               "KTUNE_LIBRARY_CUDA_DEFAULTS=ON or a KTUNE_TUNED_DIR holding CUDA tables)");
    const CudaDriver& cu = CudaDriver::get();  // BackendUnavailable without a driver
    int count = 0;
    KT_CU(cuDeviceGetCount(&count));
    if (index < 0 || index >= count)
      throw BackendUnavailable("no CUDA device " + std::to_string(index) + ": this machine has " + std::to_string(count));
    KT_CU(cuDeviceGet(&device_, index));
    KT_CU(cuDevicePrimaryCtxRetain(&context_, device_));
    KT_CU(cuCtxSetCurrent(context_));
    info_ = describe_cuda_device(device_);
    int major = 0, minor = 0;
    KT_CU(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device_));
    KT_CU(cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device_));
    arch_ = library_cuda_arch(major, minor);
    compile_arch_ = compile_arch(major, minor);
    // KTUNE_LIBRARY_CUDA_ARCH=compute_80 loads the PTX variants on any GPU: how the PTX path is
    // checked on a GPU that has CUBIN of its own.
    if (const char* forced = std::getenv("KTUNE_LIBRARY_CUDA_ARCH"); forced && *forced) {
      forced_arch_ = forced;
      arch_ = forced_arch_;
      compile_arch_ = forced_arch_;
    }
    if (arch_.empty())
      throw BackendUnavailable("the CUDA variants of ktune::kernels need compute capability 8.0 or newer; " +
                               info_.name + " has " + std::to_string(major) + "." + std::to_string(minor));
    (void)cu;
  }

  ~CudaExecutor() override {
    const CudaDriver& cu = CudaDriver::get();
    cu.cuCtxSetCurrent(context_);
    for (auto& [image, module] : modules_) cu.cuModuleUnload(module);
    workspaces_.clear();  // each frees its streams' workspaces
    cu.cuDevicePrimaryCtxRelease(device_);
  }

  const DeviceInfo& device() const override { return info_; }
  bool runs(const KernelFamily& family) const override { return family.cuda_source() != nullptr; }
  bool capturing(void* stream) const override {
    current();
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
    const CUresult asked = CudaDriver::get().cuStreamIsCapturing(static_cast<CUstream>(stream), &status);
    return asked != CUDA_SUCCESS || status != CU_STREAM_CAPTURE_STATUS_NONE;
  }

  void* allocate(std::size_t bytes) override {
    current();
    CUdeviceptr pointer = 0;
    KT_CU(cuMemAlloc(&pointer, bytes == 0 ? 1 : bytes));
    return reinterpret_cast<void*>(pointer);
  }
  void release(void* memory) override {
    current();
    KT_CU(cuMemFree(reinterpret_cast<CUdeviceptr>(memory)));
  }
  void copy_to_device(void* device, const void* host, std::size_t bytes) override {
    current();
    KT_CU(cuMemcpyHtoD(reinterpret_cast<CUdeviceptr>(device), host, bytes));
  }
  void copy_to_host(void* host, const void* device, std::size_t bytes) override {
    current();
    KT_CU(cuMemcpyDtoH(host, reinterpret_cast<CUdeviceptr>(device), bytes));
  }
  void synchronize() override {
    current();
    KT_CU(cuCtxSynchronize());
  }

 private:
  PreparedLaunch prepare_variant(const KernelFamily& family, const Problem& problem, const Config& config,
                                 const SearchSpace& space, Binary binary) override {
    current();
    Problem compiled;
    const GpuImage& image = choose_image(family, problem, config, space, binary, compiled);
    CUfunction function = load(image);
    const auto launch = launch_geometry(space, config, make_context(problem, info_));
    KernelGeometry geometry = KernelGeometry::from(launch);
    // The grid covers the call's shape; the shared memory is what the binary was sized for (a
    // run-time-dims variant keeps rows as wide as its bound).
    if (compiled.dims != problem.dims)
      geometry.shared_bytes = KernelGeometry::from(launch_geometry(space, config, make_context(compiled, info_))).shared_bytes;
    if (geometry.grid[0] == 0) throw ConfigCannotRun("the space gives no positive launch.grid_x for this config");
    if (geometry.cluster_x > 1 && geometry.grid[0] % geometry.cluster_x != 0)
      throw ConfigCannotRun("launch.grid_x is not a multiple of launch.cluster_x");
    if (geometry.shared_bytes > 0) {
      const CUresult set = CudaDriver::get().cuFuncSetAttribute(
          function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, static_cast<int>(geometry.shared_bytes));
      if (set != CUDA_SUCCESS) throw ConfigCannotRun("its shared memory exceeds the device's limit");
    }
    // A space may give a workspace (split-K partial sums, tickets): one per stream the call runs
    // on, zeroed when made; kernels leave theirs ready for their next launch.
    const auto workspace_bytes = launch.count("workspace_bytes") ? launch.at("workspace_bytes") : -1;
    StreamWorkspaces<CUdeviceptr>* workspaces = nullptr;
    if (workspace_bytes > 0) {
      auto made = std::make_unique<StreamWorkspaces<CUdeviceptr>>(
          static_cast<std::size_t>(workspace_bytes),
          [this](std::size_t bytes) {
            current();
            CUdeviceptr workspace = 0;
            KT_CU(cuMemAlloc(&workspace, bytes));
            // Zeroed and finished before any stream's kernel reads it: the plain memset runs on the
            // legacy stream, which non-blocking streams (PyTorch's) do not wait for.
            const CUresult zeroed = CudaDriver::get().cuMemsetD8(workspace, 0, bytes);
            const CUresult done = zeroed == CUDA_SUCCESS ? CudaDriver::get().cuCtxSynchronize() : zeroed;
            if (done != CUDA_SUCCESS) {
              CudaDriver::get().cuMemFree(workspace);
              KT_CU(cuCtxSynchronize());  // throws with the driver's message
            }
            return workspace;
          },
          [](CUdeviceptr workspace) { CudaDriver::get().cuMemFree(workspace); });
      std::lock_guard lock(mutex_);
      workspaces = workspaces_.emplace_back(std::move(made)).get();
    }
    std::vector<long long> dims;
    for (const auto& [name, value] : problem.dims) dims.push_back(value);
    const std::vector<TensorMapSpec> maps = family.tensor_maps(problem, config);
    return [this, function, geometry, dims, maps, workspaces, workspace_bytes,
            precision = problem.precision](std::span<void* const> tensors, void* stream) mutable {
      current();
      CUdeviceptr workspace = 0;
      if (workspaces) {
        // A stream being captured (or the legacy stream while another one is: an error) must not
        // allocate: such launches take the workspace made with the call.
        CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
        const CUresult asked = CudaDriver::get().cuStreamIsCapturing(static_cast<CUstream>(stream), &status);
        workspace = workspaces->of(stream, asked != CUDA_SUCCESS || status != CU_STREAM_CAPTURE_STATUS_NONE);
      }
      // Kernel parameters: the tensors' device pointers, the dims as long long, the config's
      // TMA descriptors, then the workspace when the space declares one.
      std::vector<CUdeviceptr> pointers;
      for (void* tensor : tensors) pointers.push_back(reinterpret_cast<CUdeviceptr>(tensor));
      std::vector<CUtensorMap> encoded;
      for (const TensorMapSpec& spec : maps) {
        std::string why;
        encoded.push_back(encode_tensor_map(spec, pointers, workspace, precision, why));
        if (!why.empty()) throw std::runtime_error("TMA descriptor of " + tensor_map_target(spec) + ": " + why);
      }
      std::vector<void*> arguments;
      for (auto& pointer : pointers) arguments.push_back(&pointer);
      for (auto& dim : dims) arguments.push_back(&dim);
      for (auto& map : encoded) arguments.push_back(&map);
      if (workspace_bytes >= 0) arguments.push_back(&workspace);
      launch_kernel(function, geometry, arguments.data(), static_cast<CUstream>(stream));
    };
  }

  void current() const { KT_CU(cuCtxSetCurrent(context_)); }

  VariantImages images() const override { return {cuda_images(), arch_, "CUDA"}; }
  std::unique_ptr<const RuntimeCompiler> make_compiler() const override {
    return std::make_unique<const NvrtcCompiler>(compile_arch_, default_binary_cache_dir());
  }

  CUfunction load(const GpuImage& image) {
    std::lock_guard lock(mutex_);
    auto [found, inserted] = modules_.try_emplace(&image, nullptr);
    if (inserted) {
      const CUresult loaded = CudaDriver::get().cuModuleLoadData(&found->second, image.data);
      if (loaded != CUDA_SUCCESS) {
        modules_.erase(found);
        throw ConfigCannotRun("its compiled variant does not load here: " + CudaDriver::get().error_text(loaded));
      }
    }
    CUfunction function = nullptr;
    KT_CU(cuModuleGetFunction(&function, found->second, std::string(image.entry).c_str()));
    return function;
  }

  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  DeviceInfo info_;
  std::string_view arch_;
  std::string forced_arch_;
  std::string compile_arch_;  // what a tune on this GPU compiles for: sm_90a on Hopper, sm_89 on Ada
  std::mutex mutex_;
  std::map<const GpuImage*, CUmodule> modules_;
  std::vector<std::unique_ptr<StreamWorkspaces<CUdeviceptr>>> workspaces_;
};

}  // namespace

std::unique_ptr<Executor> make_cuda_executor(int device) { return std::make_unique<CudaExecutor>(device); }

}  // namespace ktune::library
