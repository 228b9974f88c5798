// The Vulkan backend of the library. Memory is host-visible storage buffers, handed to the caller
// as opaque handles (a VulkanAllocation*) that run() and the copies take; copies are memcpy into
// the mapped memory. Each family runs the SPIR-V glslc compiled at build time for the call's
// precision, embedded in the library: nothing is compiled at run time, so a config whose
// compile-time parameters differ from the build-time module's values (GEMM's path=coopmat) is
// refused and another config is chosen. Bindings, push constants, specialization constants and
// dispatch geometry are those of the tuner's Vulkan backend (tuner/backends/vulkan/
// vulkan_dispatch.hpp). Calls are synchronous: run() submits the dispatch and waits for it, so
// synchronize() has nothing to wait for; the stream argument is ignored. A call's tensors are
// distinct allocations (the shaders' buffers are restrict).
#include <cstring>
#include <map>
#include <memory>
#include <mutex>

#include "library/src/executors.hpp"
#include "tuner/backends/vulkan/vulkan_dispatch.hpp"
#include "tuner/backends/vulkan/vulkan_shaders.hpp"
#include "tuner/core/errors.hpp"
#include "tuner/core/space_context.hpp"

namespace ktune::library {
namespace {

using kernels::Error;
using kernels::ErrorCode;

// What Context::allocate returns on Vulkan.
struct VulkanAllocation {
  VulkanBuffer buffer;
  std::size_t bytes;  // as asked (the buffer may be larger)
  VulkanAllocation(const VulkanContext& context, std::size_t size)
      : buffer(context, size, kVulkanHostVisible), bytes(size) {}
};

// The build-time module of one shader in one precision.
struct LoadedShader {
  VkShaderModule module = VK_NULL_HANDLE;
  std::map<std::string, SpecializationConstant> constants;
};

// One config of a family made ready for one problem: its pipeline and layout, its push constants
// and geometry, and what each tensor must hold.
struct VulkanLaunch {
  std::unique_ptr<VulkanBindings> bindings;
  std::unique_ptr<VulkanPipeline> pipeline;
  std::vector<std::uint32_t> push_constants;
  WorkgroupGeometry geometry;
  std::vector<std::string> tensor_names;
  std::vector<std::size_t> tensor_bytes;
};

// The library has no glslang: a config runs only when each compile-time parameter holds the
// value the build-time SPIR-V was compiled with (the space's "build_time_value").
void require_build_time_values(const SearchSpace& space, const Config& config) {
  for (const Parameter& parameter : space.parameters()) {
    if (!parameter.compile_time) continue;
    const Value& value = config.at(parameter.name);
    if (parameter.build_time_value && value == *parameter.build_time_value) continue;
    throw ConfigCannotRun(parameter.name + "=" + to_string(value) +
                          " is compiled into the shader at tune time; this library carries only the build-time "
                          "SPIR-V" +
                          (parameter.build_time_value
                               ? " (" + parameter.name + "=" + to_string(*parameter.build_time_value) + ")"
                               : ""));
  }
}

class VulkanExecutor final : public Executor {
 public:
  explicit VulkanExecutor(int device)
      : context_(device), submitter_(context_), placeholder_(context_, 4, kVulkanHostVisible) {}

  ~VulkanExecutor() override {
    VulkanLibrary& vk = VulkanLibrary::get();
    vk.vkDeviceWaitIdle(context_.device());
    for (auto& [key, shader] : shaders_) vk.vkDestroyShaderModule(context_.device(), shader.module, nullptr);
  }

  const DeviceInfo& device() const override { return context_.info(); }
  bool runs(const KernelFamily& family) const override { return family.vulkan_shader() != nullptr; }

  void* allocate(std::size_t bytes) override {
    auto allocation = std::make_unique<VulkanAllocation>(context_, bytes);
    void* handle = allocation.get();
    std::lock_guard lock(mutex_);
    allocations_.emplace(handle, std::move(allocation));
    return handle;
  }

  void release(void* memory) override {
    std::lock_guard lock(mutex_);
    if (allocations_.erase(memory) == 0) throw Error(ErrorCode::bad_argument, "release: " + not_ours("the memory"));
  }

  void copy_to_device(void* device, const void* host, std::size_t bytes) override {
    std::lock_guard lock(mutex_);
    std::memcpy(allocation(device, "copy_to_device: the device memory", bytes).buffer.mapped, host, bytes);
  }

  void copy_to_host(void* host, const void* device, std::size_t bytes) override {
    std::lock_guard lock(mutex_);
    std::memcpy(host, allocation(device, "copy_to_host: the device memory", bytes).buffer.mapped, bytes);
  }

  void synchronize() override {}  // every call has finished when run() returns

  PreparedLaunch prepare(const KernelFamily& family, const Problem& problem, const Config& config,
                         const SearchSpace& space) override {
    const VulkanShader* shader = family.vulkan_shader();
    if (!shader) throw ConfigCannotRun(family.name() + " has no Vulkan shader");
    try {
      require_vulkan_precision(problem.precision);
    } catch (const InputError& e) {
      throw Error(ErrorCode::unsupported, family.name() + " on Vulkan: " + e.what());
    }
    require_build_time_values(space, config);

    auto launch = std::make_shared<VulkanLaunch>();
    std::string unsupported;
    launch->push_constants = dims_as_push_constants(problem, unsupported);
    if (!unsupported.empty()) throw Error(ErrorCode::unsupported, family.name() + " on Vulkan: " + unsupported);
    for (const TensorSpec& spec : family.tensors(problem)) {
      const auto bytes = static_cast<std::size_t>(spec.bytes(problem));
      if (bytes > context_.max_storage_buffer_range())
        throw Error(ErrorCode::unsupported, "tensor '" + spec.name + "' takes " + std::to_string(bytes) +
                                                " bytes, above the Vulkan device's maxStorageBufferRange of " +
                                                std::to_string(context_.max_storage_buffer_range()));
      launch->tensor_names.push_back(spec.name);
      launch->tensor_bytes.push_back(bytes);
    }

    launch->geometry = workgroup_geometry(launch_geometry(space, config, make_context(problem, device())));
    if (const std::string refusal = launch_refusal(device(), launch->geometry); !refusal.empty())
      throw ConfigCannotRun(refusal);
    std::lock_guard lock(mutex_);
    const LoadedShader& loaded = shader_of(*shader, problem.precision);
    const Specialization specialization = specialization_for(loaded.constants, launch->geometry, config, problem);
    if (!specialization.refusal.empty()) throw ConfigCannotRun(specialization.refusal);
    launch->bindings = std::make_unique<VulkanBindings>(
        context_.device(), static_cast<std::uint32_t>(launch->tensor_names.size()),
        static_cast<std::uint32_t>(launch->push_constants.size() * sizeof(std::uint32_t)));
    launch->pipeline = std::make_unique<VulkanPipeline>(context_.device(), loaded.module, specialization,
                                                        launch->bindings->pipeline_layout());
    if (launch->pipeline->result != VK_SUCCESS)
      throw ConfigCannotRun(std::string("vkCreateComputePipelines failed: ") + vk_result_name(launch->pipeline->result));
    return [this, launch](std::span<void* const> tensors, void*) { run(*launch, tensors); };
  }

 private:
  static std::string not_ours(const std::string& what) {
    return what + " is not memory this Vulkan context allocated (on Vulkan, memory is the handle "
                  "Context::allocate returned, not an address within it)";
  }

  // The allocation behind `handle`, holding at least `bytes`; Error(bad_argument) naming `what`
  // otherwise. Called with mutex_ held.
  VulkanAllocation& allocation(const void* handle, const std::string& what, std::size_t bytes) {
    const auto found = allocations_.find(const_cast<void*>(handle));
    if (found == allocations_.end()) throw Error(ErrorCode::bad_argument, not_ours(what));
    if (found->second->bytes < bytes)
      throw Error(ErrorCode::bad_argument, what + " holds " + std::to_string(found->second->bytes) + " bytes; " +
                                               std::to_string(bytes) + " are needed");
    return *found->second;
  }

  // The build-time module of `shader` in `precision`, created once. Called with mutex_ held.
  const LoadedShader& shader_of(const VulkanShader& shader, Precision precision) {
    const std::string key = std::string(shader.file) + "|" + std::string(to_string(precision));
    if (auto found = shaders_.find(key); found != shaders_.end()) return found->second;
    const std::vector<std::uint32_t>* words = prebuilt_spirv(shader.file, precision);
    if (!words)
      throw Error(ErrorCode::unsupported, "this library has no " + std::string(to_string(precision)) + " SPIR-V of " +
                                              std::string(shader.file));
    LoadedShader loaded;
    loaded.constants = specialization_constants(*words);
    loaded.module = create_shader_module(context_.device(), *words);
    return shaders_.emplace(key, std::move(loaded)).first->second;
  }

  // One call: the tensors bound in family order, one dispatch, and a wait for it. Host-coherent
  // memory needs no copy; the barrier makes the shader's writes visible to the host.
  void run(VulkanLaunch& launch, std::span<void* const> tensors) {
    std::lock_guard lock(mutex_);
    std::vector<VkBuffer> buffers;
    for (std::size_t t = 0; t < tensors.size(); ++t) {
      const std::string what = "tensor '" + launch.tensor_names[t] + "'";
      // An empty tensor may be null; a binding still needs a buffer.
      if (!tensors[t] && launch.tensor_bytes[t] == 0) {
        buffers.push_back(placeholder_.buffer);
        continue;
      }
      buffers.push_back(allocation(tensors[t], what, launch.tensor_bytes[t]).buffer.buffer);
      // The shaders declare their buffers restrict (kernels/common/vulkan_common.glsl).
      for (std::size_t earlier = 0; earlier < t; ++earlier)
        if (tensors[earlier] == tensors[t])
          throw Error(ErrorCode::bad_argument, what + " is the same memory as tensor '" +
                                                   launch.tensor_names[earlier] +
                                                   "'; on Vulkan every tensor of a call is its own allocation");
    }
    launch.bindings->bind(buffers);
    submitter_.submit([&](VkCommandBuffer commands) {
      record_dispatch(commands, launch.pipeline->pipeline, *launch.bindings, launch.push_constants, launch.geometry);
      vulkan_barrier(commands, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                     VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
    });
  }

  VulkanContext context_;
  VulkanSubmitter submitter_;
  VulkanBuffer placeholder_;
  std::mutex mutex_;  // the queue, the descriptor sets in use, the allocations and the modules
  std::map<void*, std::unique_ptr<VulkanAllocation>> allocations_;
  std::map<std::string, LoadedShader> shaders_;
};

}  // namespace

std::unique_ptr<Executor> make_vulkan_executor(int device) { return std::make_unique<VulkanExecutor>(device); }

}  // namespace ktune::library
