#include "tuner/backends/vulkan/vulkan_backend.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>

#include "tuner/backends/gpu_source.hpp"
#include "tuner/backends/host_problem.hpp"
#include "tuner/backends/output_check.hpp"
#include "tuner/backends/vulkan/spirv_reflection.hpp"
#include "tuner/backends/vulkan/vulkan_context.hpp"
#include "tuner/core/errors.hpp"
#include "tuner/measure/verify.hpp"

namespace ktune {
namespace {

std::string lower(std::string text) {
  for (auto& ch : text) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return text;
}

// A buffer and its memory, released on scope exit. Sizes are rounded up to 4 bytes, so that
// vkCmdFillBuffer (which works in 4-byte words) poisons every element.
struct Buffer {
  VkDevice device = VK_NULL_HANDLE;
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  VkDeviceSize bytes = 0;
  void* mapped = nullptr;

  Buffer(const VulkanContext& context, VkDeviceSize size, VkMemoryPropertyFlags properties) : device(context.device()) {
    VulkanLibrary& vk = VulkanLibrary::get();
    bytes = std::max<VkDeviceSize>(4, (size + 3) / 4 * 4);
    VkBufferCreateInfo create{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    create.size = bytes;
    create.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    create.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    KT_VK(vkCreateBuffer(device, &create, nullptr, &buffer));
    VkMemoryRequirements requirements{};
    vk.vkGetBufferMemoryRequirements(device, buffer, &requirements);
    VkMemoryAllocateInfo allocate{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    allocate.allocationSize = requirements.size;
    allocate.memoryTypeIndex = context.memory_type(requirements.memoryTypeBits, properties);
    const VkResult allocated = vk.vkAllocateMemory(device, &allocate, nullptr, &memory);
    if (allocated != VK_SUCCESS) {
      vk.vkDestroyBuffer(device, buffer, nullptr);
      vk.check(allocated, "vkAllocateMemory", __FILE__, __LINE__);
    }
    KT_VK(vkBindBufferMemory(device, buffer, memory, 0));
    if (properties & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) KT_VK(vkMapMemory(device, memory, 0, VK_WHOLE_SIZE, 0, &mapped));
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer() {
    VulkanLibrary& vk = VulkanLibrary::get();
    if (buffer) vk.vkDestroyBuffer(device, buffer, nullptr);
    if (memory) vk.vkFreeMemory(device, memory, nullptr);
  }
};

constexpr VkMemoryPropertyFlags kDeviceLocal = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
constexpr VkMemoryPropertyFlags kHostVisible = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;

// Makes the writes of `source` stages visible to the reads of `destination` stages.
void barrier(VkCommandBuffer commands, VkPipelineStageFlags source, VkAccessFlags source_access,
             VkPipelineStageFlags destination, VkAccessFlags destination_access) {
  VkMemoryBarrier memory_barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  memory_barrier.srcAccessMask = source_access;
  memory_barrier.dstAccessMask = destination_access;
  VulkanLibrary::get().vkCmdPipelineBarrier(commands, source, destination, 0, 1, &memory_barrier, 0, nullptr, 0, nullptr);
}

// A compute pipeline of one variant, destroyed on scope exit.
struct Pipeline {
  VkDevice device;
  VkPipeline pipeline = VK_NULL_HANDLE;
  explicit Pipeline(VkDevice d) : device(d) {}
  ~Pipeline() {
    if (pipeline) VulkanLibrary::get().vkDestroyPipeline(device, pipeline, nullptr);
  }
};

}  // namespace

struct VulkanBackend::Impl {
  std::unique_ptr<VulkanContext> context;
  bool healthy = true;
  VkCommandPool command_pool = VK_NULL_HANDLE;
  VkCommandBuffer commands = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;
  VkQueryPool queries = VK_NULL_HANDLE;
  bool warmed_up_before = false;    // the process's first config warms the clocks up for longer
  std::unique_ptr<Buffer> staging;  // host-visible, for uploads and read-backs
  std::unique_ptr<Buffer> flush;    // written between samples to evict caches

  struct ProblemState {
    std::string key;
    std::vector<TensorSpec> specs;
    std::vector<std::unique_ptr<Buffer>> buffers;
    HostTensors expected;
    std::vector<std::uint32_t> push_constants;  // the dims
    std::string unsupported;  // why this device cannot hold the problem; empty when it can
    VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
    VkPipelineLayout pipeline_layout = VK_NULL_HANDLE;
    VkDescriptorPool descriptor_pool = VK_NULL_HANDLE;
    VkDescriptorSet descriptor_set = VK_NULL_HANDLE;
    VkDevice device = VK_NULL_HANDLE;
    ~ProblemState() {
      VulkanLibrary& vk = VulkanLibrary::get();
      if (descriptor_pool) vk.vkDestroyDescriptorPool(device, descriptor_pool, nullptr);
      if (pipeline_layout) vk.vkDestroyPipelineLayout(device, pipeline_layout, nullptr);
      if (set_layout) vk.vkDestroyDescriptorSetLayout(device, set_layout, nullptr);
    }
  };
  std::unique_ptr<ProblemState> state;

  // The shader module of the last variant and its specialization constants by name.
  VkShaderModule module = VK_NULL_HANDLE;
  std::string module_path;
  std::map<std::string, SpecializationConstant> constants;

  ~Impl() {
    if (!context) return;
    VulkanLibrary& vk = VulkanLibrary::get();
    const VkDevice device = context->device();
    vk.vkDeviceWaitIdle(device);
    if (module) vk.vkDestroyShaderModule(device, module, nullptr);
    state.reset();
    staging.reset();
    flush.reset();
    if (queries) vk.vkDestroyQueryPool(device, queries, nullptr);
    if (fence) vk.vkDestroyFence(device, fence, nullptr);
    if (command_pool) vk.vkDestroyCommandPool(device, command_pool, nullptr);
  }

  VkDevice device() const { return context->device(); }

  // Records commands with `record`, submits them and waits for the device to finish them.
  template <typename Record>
  void submit(Record record) {
    VulkanLibrary& vk = VulkanLibrary::get();
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    KT_VK(vkBeginCommandBuffer(commands, &begin));
    record(commands);
    KT_VK(vkEndCommandBuffer(commands));
    run_recorded();
    (void)vk;
  }

  // Submits the command buffer as recorded and waits for it.
  void run_recorded() {
    VkSubmitInfo submit_info{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    submit_info.commandBufferCount = 1;
    submit_info.pCommandBuffers = &commands;
    KT_VK(vkResetFences(device(), 1, &fence));
    KT_VK(vkQueueSubmit(context->queue(), 1, &submit_info, fence));
    KT_VK(vkWaitForFences(device(), 1, &fence, VK_TRUE, std::numeric_limits<std::uint64_t>::max()));
  }

  // Dispatches back to back, batches of 16 per submit, before a config's timed samples, until the
  // batches stop getting faster: at least kMinWarmup (kFirstWarmup for the process's first
  // config), at most kMaxWarmup. A GPU that idled while the CPU made a problem's inputs and
  // reference (seconds at large shapes) runs its first dispatches at lowered clocks, and a couple
  // of warm-up runs do not bring them back up: on an H100 the same config timed first after such a
  // pause measured up to 3x slower than when timed later in a tune, and on an H200 a fixed 100 ms
  // left the first config of a process 4-5x slow (reports/vulkan.md). Outputs are not read after.
  template <typename Record>
  void warm_up_clocks(Record dispatch) {
    using Clock = std::chrono::steady_clock;
    constexpr auto kMinWarmup = std::chrono::milliseconds(100);
    constexpr auto kFirstWarmup = std::chrono::milliseconds(500);
    constexpr auto kMaxWarmup = std::chrono::milliseconds(1500);
    constexpr double kStillSpeedingUp = 0.97;  // a batch 3% faster than every earlier one
    constexpr int kBatch = 16;
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    KT_VK(vkBeginCommandBuffer(commands, &begin));
    for (int i = 0; i < kBatch; ++i) dispatch(commands);
    KT_VK(vkEndCommandBuffer(commands));
    const auto least = warmed_up_before ? Clock::duration(kMinWarmup) : Clock::duration(kFirstWarmup);
    warmed_up_before = true;
    const auto started = Clock::now();
    auto fastest = Clock::duration::max();
    for (;;) {
      const auto batch_start = Clock::now();
      run_recorded();
      const auto now = Clock::now();
      const auto took = now - batch_start;
      const bool speeding_up = took.count() < kStillSpeedingUp * static_cast<double>(fastest.count());
      fastest = std::min(fastest, took);
      if (now - started >= kMaxWarmup || (now - started >= least && !speeding_up)) break;
    }
  }

  Buffer& staging_of(VkDeviceSize bytes) {
    if (!staging || staging->bytes < bytes) {
      staging.reset();
      staging = std::make_unique<Buffer>(*context, bytes, kHostVisible);
    }
    return *staging;
  }

  ProblemState& prepare_problem(const KernelFamily& family, const Problem& problem, std::uint64_t seed) {
    if (state && state->key == host_problem_key(problem, seed)) return *state;
    state.reset();
    VulkanLibrary& vk = VulkanLibrary::get();
    HostProblem host = make_host_problem(family, problem, seed);
    auto fresh = std::make_unique<ProblemState>();
    fresh->device = device();
    fresh->key = host.key;
    fresh->specs = host.specs;
    for (const auto& [name, value] : problem.dims) {
      if (value < 0 || value > std::numeric_limits<std::uint32_t>::max())
        fresh->unsupported = "dim " + name + " = " + std::to_string(value) + " does not fit the shaders' 32-bit dims";
      fresh->push_constants.push_back(static_cast<std::uint32_t>(value));
    }
    for (std::size_t t = 0; t < host.specs.size(); ++t)
      if (host.bytes[t] > context->max_storage_buffer_range())
        fresh->unsupported = "tensor " + host.specs[t].name + " takes " + std::to_string(host.bytes[t]) +
                             " bytes, above the device's maxStorageBufferRange of " +
                             std::to_string(context->max_storage_buffer_range());
    for (std::size_t t = 0; t < host.specs.size(); ++t) {
      fresh->buffers.push_back(std::make_unique<Buffer>(*context, host.bytes[t], kDeviceLocal));
      if (host.stored[t].empty()) continue;
      Buffer& upload = staging_of(host.stored[t].size());
      std::memcpy(upload.mapped, host.stored[t].data(), host.stored[t].size());
      VkBufferCopy region{0, 0, host.stored[t].size()};
      const VkBuffer target = fresh->buffers.back()->buffer;
      submit([&](VkCommandBuffer c) { vk.vkCmdCopyBuffer(c, upload.buffer, target, 1, &region); });
    }
    fresh->expected = std::move(host.expected);

    // One storage buffer per tensor, in tensors() order; the dims as push constants.
    const auto count = static_cast<std::uint32_t>(fresh->buffers.size());
    std::vector<VkDescriptorSetLayoutBinding> bindings(count);
    for (std::uint32_t b = 0; b < count; ++b)
      bindings[b] = {b, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
    VkDescriptorSetLayoutCreateInfo layout{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    layout.bindingCount = count;
    layout.pBindings = bindings.data();
    KT_VK(vkCreateDescriptorSetLayout(device(), &layout, nullptr, &fresh->set_layout));
    VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0,
                              static_cast<std::uint32_t>(fresh->push_constants.size() * sizeof(std::uint32_t))};
    VkPipelineLayoutCreateInfo pipeline_layout{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    pipeline_layout.setLayoutCount = 1;
    pipeline_layout.pSetLayouts = &fresh->set_layout;
    pipeline_layout.pushConstantRangeCount = range.size > 0 ? 1 : 0;
    pipeline_layout.pPushConstantRanges = &range;
    KT_VK(vkCreatePipelineLayout(device(), &pipeline_layout, nullptr, &fresh->pipeline_layout));
    VkDescriptorPoolSize pool_size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, std::max(count, 1u)};
    VkDescriptorPoolCreateInfo pool{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    pool.maxSets = 1;
    pool.poolSizeCount = 1;
    pool.pPoolSizes = &pool_size;
    KT_VK(vkCreateDescriptorPool(device(), &pool, nullptr, &fresh->descriptor_pool));
    VkDescriptorSetAllocateInfo allocate{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    allocate.descriptorPool = fresh->descriptor_pool;
    allocate.descriptorSetCount = 1;
    allocate.pSetLayouts = &fresh->set_layout;
    KT_VK(vkAllocateDescriptorSets(device(), &allocate, &fresh->descriptor_set));
    std::vector<VkDescriptorBufferInfo> infos(count);
    std::vector<VkWriteDescriptorSet> writes(count);
    for (std::uint32_t b = 0; b < count; ++b) {
      infos[b] = {fresh->buffers[b]->buffer, 0, VK_WHOLE_SIZE};
      writes[b] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
      writes[b].dstSet = fresh->descriptor_set;
      writes[b].dstBinding = b;
      writes[b].descriptorCount = 1;
      writes[b].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
      writes[b].pBufferInfo = &infos[b];
    }
    vk.vkUpdateDescriptorSets(device(), count, writes.data(), 0, nullptr);
    state = std::move(fresh);
    return *state;
  }

  void load_module(const std::string& path) {
    if (module && module_path == path) return;
    VulkanLibrary& vk = VulkanLibrary::get();
    if (module) vk.vkDestroyShaderModule(device(), module, nullptr);
    module = VK_NULL_HANDLE;
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read the compiled variant " + path);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (bytes.size() % 4 != 0 || bytes.empty()) throw std::runtime_error(path + " is not a SPIR-V module");
    std::vector<std::uint32_t> words(bytes.size() / 4);
    std::memcpy(words.data(), bytes.data(), bytes.size());
    constants = specialization_constants(words);
    VkShaderModuleCreateInfo create{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    create.codeSize = bytes.size();
    create.pCode = words.data();
    KT_VK(vkCreateShaderModule(device(), &create, nullptr, &module));
    module_path = path;
  }
};

VulkanBackend::VulkanBackend(int device_index) : impl_(std::make_unique<Impl>()) {
  Impl& self = *impl_;
  self.context = std::make_unique<VulkanContext>(device_index);
  VulkanLibrary& vk = VulkanLibrary::get();
  VkCommandPoolCreateInfo pool{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pool.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pool.queueFamilyIndex = self.context->queue_family();
  KT_VK(vkCreateCommandPool(self.device(), &pool, nullptr, &self.command_pool));
  VkCommandBufferAllocateInfo allocate{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  allocate.commandPool = self.command_pool;
  allocate.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  allocate.commandBufferCount = 1;
  KT_VK(vkAllocateCommandBuffers(self.device(), &allocate, &self.commands));
  VkFenceCreateInfo fence{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  KT_VK(vkCreateFence(self.device(), &fence, nullptr, &self.fence));
  VkQueryPoolCreateInfo queries{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
  queries.queryType = VK_QUERY_TYPE_TIMESTAMP;
  queries.queryCount = 2;
  KT_VK(vkCreateQueryPool(self.device(), &queries, nullptr, &self.queries));
  // Larger than any GPU's last-level cache (the H200's L2 is 60 MB); a CPU device (lavapipe)
  // gets a smaller one, as filling it is slow there.
  const VkDeviceSize flush_bytes = self.context->is_cpu() ? (VkDeviceSize{64} << 20) : (VkDeviceSize{256} << 20);
  self.flush = std::make_unique<Buffer>(*self.context, flush_bytes, kDeviceLocal);
  (void)vk;
}

VulkanBackend::~VulkanBackend() = default;

const DeviceInfo& VulkanBackend::device() const { return impl_->context->info(); }
bool VulkanBackend::healthy() const { return impl_->healthy; }
void VulkanBackend::prepare(const KernelFamily& family, const Problem& problem, std::uint64_t seed) {
  impl_->prepare_problem(family, problem, seed);
}

EvaluationResult VulkanBackend::evaluate(const KernelFamily& family, const Problem& problem, const Config& config,
                                         const VariantBuild& build, const MeasureSettings& settings) {
  Impl& self = *impl_;
  VulkanLibrary& vk = VulkanLibrary::get();
  EvaluationResult result;
  result.compile_ms = build.compile_ms;
  VariantBuild variant = build;
  if (variant.binary.empty()) {
    // Not built by the tuner: the build-time module of the precision (no compile-time parameters).
    const BuiltVariant built = build_vulkan_variant(family, problem, Config{}, default_binary_cache_dir());
    if (!built.ok) {
      result.outcome = Outcome::compile_error;
      result.message = built.log;
      return result;
    }
    variant.binary = built.build.binary;
  }

  try {
    Impl::ProblemState& state = self.prepare_problem(family, problem, settings.seed);
    if (!state.unsupported.empty()) {
      result.outcome = Outcome::unsupported;
      result.message = state.unsupported;
      return result;
    }
    const DeviceInfo& info = self.context->info();
    const std::int64_t grid[3] = {variant.launch_or("grid_x", 0), variant.launch_or("grid_y", 1),
                                  variant.launch_or("grid_z", 1)};
    const std::int64_t block[3] = {variant.launch_or("block_x", 1), variant.launch_or("block_y", 1),
                                   variant.launch_or("block_z", 1)};
    const char* axes[3] = {"x", "y", "z"};
    for (int a = 0; a < 3; ++a) {
      const std::int64_t max_grid = info.limits.at(std::string("max_grid_") + axes[a]);
      if (grid[a] <= 0 || grid[a] > max_grid || block[a] <= 0) {
        result.outcome = Outcome::unsupported;
        result.message = std::string("launch.grid_") + axes[a] + " " + std::to_string(grid[a]) + " / block_" + axes[a] +
                         " " + std::to_string(block[a]) + " outside the device's range (grid 1.." +
                         std::to_string(max_grid) + ")";
        return result;
      }
    }
    if (block[0] * block[1] * block[2] > info.limits.at("max_threads_per_block")) {
      result.outcome = Outcome::unsupported;
      result.message = "a workgroup of " + std::to_string(block[0] * block[1] * block[2]) +
                       " invocations is above the device's maxComputeWorkGroupInvocations";
      return result;
    }

    // Specialization constants: the workgroup size by id, every other by name.
    try {
      self.load_module(variant.binary);
    } catch (const VulkanError& e) {
      if (e.sticky()) throw;
      result.outcome = Outcome::compile_error;
      result.message = std::string("the driver refused the SPIR-V module: ") + e.what();
      return result;
    }
    std::vector<VkSpecializationMapEntry> entries;
    std::vector<std::uint32_t> data;
    auto add = [&](std::uint32_t id, std::uint32_t value) {
      entries.push_back({id, static_cast<std::uint32_t>(data.size() * 4), 4});
      data.push_back(value);
    };
    for (std::uint32_t a = 0; a < 3; ++a) add(a, static_cast<std::uint32_t>(block[a]));
    for (const auto& [name, constant] : self.constants) {
      if (constant.id < 3) continue;
      std::optional<std::int64_t> value;
      if (name.rfind("KT_DIM_", 0) == 0) {
        for (const auto& [dim, size] : problem.dims)
          if (dim == lower(name.substr(7))) value = size;
      } else if (name.rfind("KT_", 0) == 0) {
        const std::string parameter = lower(name.substr(3));
        for (const auto& [key, setting] : config.values)
          if (const auto* number = std::get_if<std::int64_t>(&setting); number && key == parameter) value = *number;
      }
      if (!value) {
        result.outcome = Outcome::compile_error;
        result.message = "the shader's specialization constant " + name +
                         " matches no integer parameter of the config and no dim of the problem";
        return result;
      }
      if (*value < std::numeric_limits<std::int32_t>::min() || *value > std::numeric_limits<std::uint32_t>::max()) {
        result.outcome = Outcome::unsupported;
        result.message = "specialization constant " + name + " = " + std::to_string(*value) + " does not fit 32 bits";
        return result;
      }
      add(constant.id, static_cast<std::uint32_t>(*value));
    }
    VkSpecializationInfo specialization{static_cast<std::uint32_t>(entries.size()), entries.data(),
                                        data.size() * sizeof(std::uint32_t), data.data()};
    VkComputePipelineCreateInfo create{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    create.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
    create.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    create.stage.module = self.module;
    create.stage.pName = "main";
    create.stage.pSpecializationInfo = &specialization;
    create.layout = state.pipeline_layout;
    if (self.context->captures_pipeline_statistics()) create.flags |= VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR;
    Pipeline pipeline(self.device());
    const VkResult created = vk.vkCreateComputePipelines(self.device(), VK_NULL_HANDLE, 1, &create, nullptr, &pipeline.pipeline);
    if (created == VK_ERROR_DEVICE_LOST) vk.check(created, "vkCreateComputePipelines", __FILE__, __LINE__);
    if (created != VK_SUCCESS) {
      pipeline.pipeline = VK_NULL_HANDLE;
      result.outcome = Outcome::compile_error;
      result.message = std::string("vkCreateComputePipelines failed: ") + vk_result_name(created);
      return result;
    }
    if (self.context->captures_pipeline_statistics())
      result.environment["pipeline"] = self.context->pipeline_statistics(pipeline.pipeline);

    auto dispatch = [&](VkCommandBuffer c) {
      vk.vkCmdBindPipeline(c, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline.pipeline);
      vk.vkCmdBindDescriptorSets(c, VK_PIPELINE_BIND_POINT_COMPUTE, state.pipeline_layout, 0, 1, &state.descriptor_set,
                                 0, nullptr);
      if (!state.push_constants.empty())
        vk.vkCmdPushConstants(c, state.pipeline_layout, VK_SHADER_STAGE_COMPUTE_BIT, 0,
                              static_cast<std::uint32_t>(state.push_constants.size() * 4), state.push_constants.data());
      vk.vkCmdDispatch(c, static_cast<std::uint32_t>(grid[0]), static_cast<std::uint32_t>(grid[1]),
                       static_cast<std::uint32_t>(grid[2]));
    };

    // Verification on poisoned outputs (all-ones bytes are NaN in every float format), read back
    // through the staging buffer.
    std::vector<std::size_t> outputs_at;
    VkDeviceSize read_bytes = 0;
    for (std::size_t t = 0; t < state.specs.size(); ++t)
      if (state.specs[t].is_output) {
        outputs_at.push_back(t);
        read_bytes += state.buffers[t]->bytes;
      }
    Buffer& readback = self.staging_of(read_bytes);
    self.submit([&](VkCommandBuffer c) {
      for (std::size_t t : outputs_at) vk.vkCmdFillBuffer(c, state.buffers[t]->buffer, 0, VK_WHOLE_SIZE, 0xFFFFFFFFu);
      barrier(c, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
              VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
      dispatch(c);
      barrier(c, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
              VK_ACCESS_TRANSFER_READ_BIT);
      VkDeviceSize offset = 0;
      for (std::size_t t : outputs_at) {
        VkBufferCopy region{0, offset, state.buffers[t]->bytes};
        vk.vkCmdCopyBuffer(c, state.buffers[t]->buffer, readback.buffer, 1, &region);
        offset += state.buffers[t]->bytes;
      }
    });
    std::vector<StoredOutput> outputs;
    VkDeviceSize offset = 0;
    for (std::size_t t : outputs_at) {
      outputs.push_back({static_cast<const char*>(readback.mapped) + offset, state.specs[t].precision(problem),
                         state.expected[t]});
      offset += state.buffers[t]->bytes;
    }
    const bool verifies = family.verifies();
    result.error = verifies ? stored_outputs_error(outputs) : -1.0;
    const Verdict verdict = verifies ? judge_error(result.error, family.tolerance(problem.precision)) : Verdict{true, ""};
    if (!verdict.passed) {
      result.outcome = Outcome::wrong_result;
      result.message = verdict.message;
      return result;
    }

    for (int i = 0; i < settings.warmup_runs; ++i) self.submit(dispatch);
    if (!self.context->is_cpu()) self.warm_up_clocks(dispatch);

    // One sample: [evict caches], timestamp, dispatch, timestamp. Recorded once, submitted per
    // sample. Both timestamps are taken at the bottom of the pipe: the first once the eviction
    // has finished, the second once the dispatch has.
    const bool flush = family.memory_bound();
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    KT_VK(vkBeginCommandBuffer(self.commands, &begin));
    const VkCommandBuffer c = self.commands;
    vk.vkCmdResetQueryPool(c, self.queries, 0, 2);
    if (flush) {
      vk.vkCmdFillBuffer(c, self.flush->buffer, 0, VK_WHOLE_SIZE, 0);
      barrier(c, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
              VK_ACCESS_SHADER_READ_BIT);
    }
    vk.vkCmdWriteTimestamp(c, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, self.queries, 0);
    dispatch(c);
    vk.vkCmdWriteTimestamp(c, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, self.queries, 1);
    KT_VK(vkEndCommandBuffer(c));
    const std::uint32_t bits = self.context->timestamp_valid_bits();
    const std::uint64_t mask = bits >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1;
    StoppingRule rule(settings.stopping);
    while (!rule.done()) {
      self.run_recorded();
      std::uint64_t stamps[2] = {};
      KT_VK(vkGetQueryPoolResults(self.device(), self.queries, 0, 2, sizeof stamps, stamps, sizeof(std::uint64_t),
                                  VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT));
      const double ns = static_cast<double>((stamps[1] - stamps[0]) & mask) * self.context->timestamp_period_ns();
      result.samples_ns.push_back(ns);
      rule.add(ns);
    }
    result.environment["l2_flushed"] = flush;
    result.environment["flush_bytes"] = self.flush->bytes;
    result.stats = summarize(result.samples_ns);
    result.outcome = Outcome::ok;
    result.message = verdict.message + "; " + rule.reason();
    return result;
  } catch (const VulkanError& e) {
    // A lost device (a crashed or hung shader) takes the worker with it.
    if (!e.sticky()) throw;
    self.healthy = false;
    result.outcome = Outcome::crashed;
    result.message = e.what();
    result.samples_ns.clear();
    return result;
  }
}

}  // namespace ktune
