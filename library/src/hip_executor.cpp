// The HIP backend of the library (AMD GPUs): the HIP runtime opened at run time (tuner/backends/
// hip/hip_library.hpp: no ROCm library at link time, and no hiprtc needed), device memory of the
// HIP runtime (a project's own hipMalloc'd buffers and streams work), and code objects compiled
// ahead of time for gfx90a and gfx1030 (gpu_variants.hpp). A config the caller asks for that the
// library does not carry is compiled with hiprtc, when the machine has it (run_time_images.hpp);
// a device of another target cannot run, nor a config with no compiled variant otherwise (the
// caller falls back to one that can).
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "library/src/gpu_executor.hpp"
#include "library/src/executors.hpp"
#include "library/src/stream_workspaces.hpp"
#include "library/src/gpu_variants.hpp"
#include "tuner/backends/hip/hip_device.hpp"
#include "tuner/backends/hip/hip_library.hpp"
#include "tuner/backends/hip/hiprtc_compiler.hpp"
#include "tuner/backends/gpu_source.hpp"
#include "tuner/core/errors.hpp"
#include "tuner/core/space_context.hpp"

namespace ktune::library {
namespace {

class HipExecutor final : public GpuExecutor {
 public:
  explicit HipExecutor(int index) : index_(index) {
    if (hip_images().empty())
      throw BackendUnavailable("this build of ktune::kernels has no HIP code objects compiled in (configure it with "
                               "KTUNE_LIBRARY_HIP_DEFAULTS=ON or a KTUNE_TUNED_DIR holding HIP tables)");
    info_ = describe_hip_device(index);  // BackendUnavailable without the runtime or the device
    arch_ = info_.architecture;
    bool compiled = false;
    std::string targets;
    for (const GpuImage& image : hip_images()) {
      compiled = compiled || image.arch == arch_;
      if (targets.find(image.arch) == std::string::npos) targets += (targets.empty() ? "" : ", ") + std::string(image.arch);
    }
    if (!compiled)
      throw BackendUnavailable("ktune::kernels has HIP code objects for " + targets + ", not for " + info_.name + " (" +
                               arch_ + "); add it to KTUNE_LIBRARY_HIP_ARCHS and rebuild the library");
  }

  ~HipExecutor() override {
    const HipLibrary& hip = HipLibrary::device_runtime();
    (void)hip.hipSetDevice(index_);
    for (auto& [image, module] : modules_) (void)hip.hipModuleUnload(module);
    workspaces_.clear();  // each frees its streams' workspaces
  }

  const DeviceInfo& device() const override { return info_; }
  bool runs(const KernelFamily& family) const override { return family.cuda_source() != nullptr; }
  bool capturing(void* stream) const override {
    current();
    hipStreamCaptureStatus status = hipStreamCaptureStatusNone;
    const hipError_t asked = HipLibrary::device_runtime().hipStreamIsCapturing(static_cast<hipStream_t>(stream), &status);
    return asked != hipSuccess || status != hipStreamCaptureStatusNone;
  }

  void* allocate(std::size_t bytes) override {
    current();
    void* pointer = nullptr;
    KT_HIP_RUNTIME(hipMalloc(&pointer, bytes == 0 ? 1 : bytes));
    return pointer;
  }
  void release(void* memory) override {
    current();
    KT_HIP_RUNTIME(hipFree(memory));
  }
  void copy_to_device(void* device, const void* host, std::size_t bytes) override {
    current();
    KT_HIP_RUNTIME(hipMemcpyHtoD(device, const_cast<void*>(host), bytes));
  }
  void copy_to_host(void* host, const void* device, std::size_t bytes) override {
    current();
    KT_HIP_RUNTIME(hipMemcpyDtoH(host, const_cast<void*>(device), bytes));
  }
  void synchronize() override {
    current();
    KT_HIP_RUNTIME(hipDeviceSynchronize());
  }

 private:
  PreparedLaunch prepare_variant(const KernelFamily& family, const Problem& problem, const Config& config,
                                 const SearchSpace& space, Binary binary) override {
    current();
    Problem compiled;
    const GpuImage& image = choose_image(family, problem, config, space, binary, compiled);
    hipFunction_t function = load(image);
    // The grid covers the call's shape; the shared memory is what the binary was sized for.
    const auto launch = launch_geometry(space, config, make_context(problem, info_));
    const auto sized = launch_geometry(space, config, make_context(compiled, info_));
    const auto value = [](const std::map<std::string, std::int64_t>& geometry, const char* name, std::int64_t fallback) {
      const auto found = geometry.find(name);
      return found == geometry.end() ? fallback : found->second;
    };
    const unsigned grid[3] = {static_cast<unsigned>(value(launch, "grid_x", 0)), static_cast<unsigned>(value(launch, "grid_y", 1)),
                              static_cast<unsigned>(value(launch, "grid_z", 1))};
    const unsigned block[3] = {static_cast<unsigned>(value(launch, "block_x", 1)),
                               static_cast<unsigned>(value(launch, "block_y", 1)),
                               static_cast<unsigned>(value(launch, "block_z", 1))};
    const auto shared_bytes = value(sized, "shared_bytes", 0);
    if (grid[0] == 0) throw ConfigCannotRun("the space gives no positive launch.grid_x for this config");
    if (shared_bytes > info_.limits.at("max_shared_memory_per_block"))
      throw ConfigCannotRun("its shared memory exceeds the device's limit");
    // A space may give a workspace (split-K partial sums, tickets): one per stream the call runs
    // on, zeroed when made; kernels leave theirs ready for their next launch.
    const auto workspace_bytes = value(launch, "workspace_bytes", -1);
    StreamWorkspaces<void*>* workspaces = nullptr;
    if (workspace_bytes > 0) {
      auto made = std::make_unique<StreamWorkspaces<void*>>(
          static_cast<std::size_t>(workspace_bytes),
          [this](std::size_t bytes) {
            current();
            void* workspace = nullptr;
            KT_HIP_RUNTIME(hipMalloc(&workspace, bytes));
            // Zeroed and finished before any stream's kernel reads it (the plain memset runs on
            // the null stream, which non-blocking streams do not wait for).
            const HipLibrary& hip = HipLibrary::device_runtime();
            const hipError_t zeroed = hip.hipMemsetD8(workspace, 0, bytes);
            const hipError_t done = zeroed == hipSuccess ? hip.hipDeviceSynchronize() : zeroed;
            if (done != hipSuccess) {
              (void)hip.hipFree(workspace);
              KT_HIP_RUNTIME(hipDeviceSynchronize());  // throws with the runtime's message
            }
            return workspace;
          },
          [](void* workspace) { (void)HipLibrary::device_runtime().hipFree(workspace); });
      std::lock_guard lock(mutex_);
      workspaces = workspaces_.emplace_back(std::move(made)).get();
    }
    std::vector<long long> dims;
    for (const auto& [name, dim] : problem.dims) dims.push_back(dim);
    return [this, function, grid0 = grid[0], grid1 = grid[1], grid2 = grid[2], block0 = block[0], block1 = block[1],
            block2 = block[2], shared_bytes, dims, workspaces, workspace_bytes](std::span<void* const> tensors,
                                                                                void* stream) mutable {
      current();
      void* workspace = nullptr;
      if (workspaces) {
        // A stream being captured must not allocate: such launches take the workspace made with
        // the call.
        hipStreamCaptureStatus status = hipStreamCaptureStatusNone;
        const hipError_t asked =
            HipLibrary::device_runtime().hipStreamIsCapturing(static_cast<hipStream_t>(stream), &status);
        workspace = workspaces->of(stream, asked != hipSuccess || status != hipStreamCaptureStatusNone);
      }
      // Kernel parameters: the tensors' device pointers, the dims as long long, then the
      // workspace when the space declares one (as the tuner's HIP backend passes them).
      std::vector<void*> pointers(tensors.begin(), tensors.end());
      std::vector<void*> arguments;
      for (auto& pointer : pointers) arguments.push_back(&pointer);
      for (auto& dim : dims) arguments.push_back(&dim);
      if (workspace_bytes >= 0) arguments.push_back(&workspace);
      KT_HIP_RUNTIME(hipModuleLaunchKernel(function, grid0, grid1, grid2, block0, block1, block2,
                                           static_cast<unsigned>(shared_bytes), static_cast<hipStream_t>(stream),
                                           arguments.data(), nullptr));
    };
  }

  void current() const { KT_HIP_RUNTIME(hipSetDevice(index_)); }

  VariantImages images() const override { return {hip_images(), arch_, "HIP"}; }
  std::unique_ptr<const RuntimeCompiler> make_compiler() const override {
    return std::make_unique<const HiprtcCompiler>(arch_, default_binary_cache_dir());
  }

  hipFunction_t load(const GpuImage& image) {
    const HipLibrary& hip = HipLibrary::device_runtime();
    std::lock_guard lock(mutex_);
    auto [found, inserted] = modules_.try_emplace(&image, nullptr);
    if (inserted) {
      const hipError_t loaded = hip.hipModuleLoadData(&found->second, image.data);
      if (loaded != hipSuccess) {
        modules_.erase(found);
        throw ConfigCannotRun("its code object does not load here: " + hip.error_text(loaded));
      }
    }
    hipFunction_t function = nullptr;
    KT_HIP_RUNTIME(hipModuleGetFunction(&function, found->second, std::string(image.entry).c_str()));
    return function;
  }

  int index_ = 0;
  DeviceInfo info_;
  std::string arch_;
  std::mutex mutex_;
  std::map<const GpuImage*, hipModule_t> modules_;
  std::vector<std::unique_ptr<StreamWorkspaces<void*>>> workspaces_;
};

}  // namespace

std::unique_ptr<Executor> make_hip_executor(int device) { return std::make_unique<HipExecutor>(device); }

}  // namespace ktune::library
