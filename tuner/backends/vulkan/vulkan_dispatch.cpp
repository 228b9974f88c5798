#include "tuner/backends/vulkan/vulkan_dispatch.hpp"

#include <algorithm>
#include <cctype>
#include <limits>
#include <optional>

namespace ktune {
namespace {

std::string lower(std::string text) {
  for (auto& ch : text) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return text;
}

}  // namespace

VulkanBuffer::VulkanBuffer(const VulkanContext& context, VkDeviceSize size, VkMemoryPropertyFlags properties)
    : device(context.device()) {
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

VulkanBuffer::~VulkanBuffer() {
  VulkanLibrary& vk = VulkanLibrary::get();
  if (buffer) vk.vkDestroyBuffer(device, buffer, nullptr);
  if (memory) vk.vkFreeMemory(device, memory, nullptr);
}

VulkanSubmitter::VulkanSubmitter(const VulkanContext& context) : context_(context) {
  VkCommandPoolCreateInfo pool{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pool.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pool.queueFamilyIndex = context.queue_family();
  KT_VK(vkCreateCommandPool(context.device(), &pool, nullptr, &pool_));
  VkCommandBufferAllocateInfo allocate{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  allocate.commandPool = pool_;
  allocate.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  allocate.commandBufferCount = 1;
  KT_VK(vkAllocateCommandBuffers(context.device(), &allocate, &commands_));
  VkFenceCreateInfo fence{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  KT_VK(vkCreateFence(context.device(), &fence, nullptr, &fence_));
}

VulkanSubmitter::~VulkanSubmitter() {
  VulkanLibrary& vk = VulkanLibrary::get();
  if (fence_) vk.vkDestroyFence(context_.device(), fence_, nullptr);
  if (pool_) vk.vkDestroyCommandPool(context_.device(), pool_, nullptr);
}

void VulkanSubmitter::begin_one_time() {
  VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  KT_VK(vkBeginCommandBuffer(commands_, &begin));
}

void VulkanSubmitter::end_and_run() {
  KT_VK(vkEndCommandBuffer(commands_));
  run_recorded();
}

void VulkanSubmitter::run_recorded() {
  VkSubmitInfo submit_info{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  submit_info.commandBufferCount = 1;
  submit_info.pCommandBuffers = &commands_;
  KT_VK(vkResetFences(context_.device(), 1, &fence_));
  KT_VK(vkQueueSubmit(context_.queue(), 1, &submit_info, fence_));
  KT_VK(vkWaitForFences(context_.device(), 1, &fence_, VK_TRUE, std::numeric_limits<std::uint64_t>::max()));
}

void vulkan_barrier(VkCommandBuffer commands, VkPipelineStageFlags source, VkAccessFlags source_access,
                    VkPipelineStageFlags destination, VkAccessFlags destination_access) {
  VkMemoryBarrier memory_barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  memory_barrier.srcAccessMask = source_access;
  memory_barrier.dstAccessMask = destination_access;
  VulkanLibrary::get().vkCmdPipelineBarrier(commands, source, destination, 0, 1, &memory_barrier, 0, nullptr, 0, nullptr);
}

std::vector<std::uint32_t> dims_as_push_constants(const Problem& problem, std::string& unsupported) {
  std::vector<std::uint32_t> words;
  for (const auto& [name, value] : problem.dims) {
    if (value < 0 || value > std::numeric_limits<std::uint32_t>::max())
      unsupported = "dim " + name + " = " + std::to_string(value) + " does not fit the shaders' 32-bit dims";
    words.push_back(static_cast<std::uint32_t>(value));
  }
  return words;
}

VulkanBindings::VulkanBindings(VkDevice device, std::uint32_t count, std::uint32_t push_bytes) : device_(device) {
  std::vector<VkDescriptorSetLayoutBinding> bindings(count);
  for (std::uint32_t b = 0; b < count; ++b)
    bindings[b] = {b, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
  VkDescriptorSetLayoutCreateInfo layout{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  layout.bindingCount = count;
  layout.pBindings = bindings.data();
  KT_VK(vkCreateDescriptorSetLayout(device_, &layout, nullptr, &set_layout_));
  VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, push_bytes};
  VkPipelineLayoutCreateInfo pipeline_layout{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  pipeline_layout.setLayoutCount = 1;
  pipeline_layout.pSetLayouts = &set_layout_;
  pipeline_layout.pushConstantRangeCount = push_bytes > 0 ? 1 : 0;
  pipeline_layout.pPushConstantRanges = &range;
  KT_VK(vkCreatePipelineLayout(device_, &pipeline_layout, nullptr, &pipeline_layout_));
  VkDescriptorPoolSize pool_size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, std::max(count, 1u)};
  VkDescriptorPoolCreateInfo pool{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  pool.maxSets = 1;
  pool.poolSizeCount = 1;
  pool.pPoolSizes = &pool_size;
  KT_VK(vkCreateDescriptorPool(device_, &pool, nullptr, &descriptor_pool_));
  VkDescriptorSetAllocateInfo allocate{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
  allocate.descriptorPool = descriptor_pool_;
  allocate.descriptorSetCount = 1;
  allocate.pSetLayouts = &set_layout_;
  KT_VK(vkAllocateDescriptorSets(device_, &allocate, &descriptor_set_));
}

VulkanBindings::~VulkanBindings() {
  VulkanLibrary& vk = VulkanLibrary::get();
  if (descriptor_pool_) vk.vkDestroyDescriptorPool(device_, descriptor_pool_, nullptr);
  if (pipeline_layout_) vk.vkDestroyPipelineLayout(device_, pipeline_layout_, nullptr);
  if (set_layout_) vk.vkDestroyDescriptorSetLayout(device_, set_layout_, nullptr);
}

void VulkanBindings::bind(std::span<const VkBuffer> buffers) {
  const auto count = static_cast<std::uint32_t>(buffers.size());
  std::vector<VkDescriptorBufferInfo> infos(count);
  std::vector<VkWriteDescriptorSet> writes(count);
  for (std::uint32_t b = 0; b < count; ++b) {
    infos[b] = {buffers[b], 0, VK_WHOLE_SIZE};
    writes[b] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    writes[b].dstSet = descriptor_set_;
    writes[b].dstBinding = b;
    writes[b].descriptorCount = 1;
    writes[b].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    writes[b].pBufferInfo = &infos[b];
  }
  VulkanLibrary::get().vkUpdateDescriptorSets(device_, count, writes.data(), 0, nullptr);
}

WorkgroupGeometry workgroup_geometry(const std::map<std::string, std::int64_t>& launch) {
  auto value_or = [&](const char* name, std::int64_t fallback) {
    const auto found = launch.find(name);
    return found == launch.end() ? fallback : found->second;
  };
  return {{value_or("grid_x", 0), value_or("grid_y", 1), value_or("grid_z", 1)},
          {value_or("block_x", 1), value_or("block_y", 1), value_or("block_z", 1)}};
}

std::string launch_refusal(const DeviceInfo& device, const WorkgroupGeometry& geometry) {
  const char* axes[3] = {"x", "y", "z"};
  for (std::size_t a = 0; a < 3; ++a) {
    const std::int64_t max_grid = device.limits.at(std::string("max_grid_") + axes[a]);
    if (geometry.grid[a] <= 0 || geometry.grid[a] > max_grid || geometry.block[a] <= 0)
      return std::string("launch.grid_") + axes[a] + " " + std::to_string(geometry.grid[a]) + " / block_" + axes[a] +
             " " + std::to_string(geometry.block[a]) + " outside the device's range (grid 1.." +
             std::to_string(max_grid) + ")";
  }
  const std::int64_t invocations = geometry.block[0] * geometry.block[1] * geometry.block[2];
  if (invocations > device.limits.at("max_threads_per_block"))
    return "a workgroup of " + std::to_string(invocations) +
           " invocations is above the device's maxComputeWorkGroupInvocations";
  return "";
}

VkSpecializationInfo Specialization::info() const {
  return {static_cast<std::uint32_t>(entries.size()), entries.data(), data.size() * sizeof(std::uint32_t), data.data()};
}

Specialization specialization_for(const std::map<std::string, SpecializationConstant>& constants,
                                  const WorkgroupGeometry& geometry, const Config& config, const Problem& problem) {
  Specialization out;
  auto add = [&](std::uint32_t id, std::uint32_t value) {
    out.entries.push_back({id, static_cast<std::uint32_t>(out.data.size() * 4), 4});
    out.data.push_back(value);
  };
  for (std::uint32_t a = 0; a < 3; ++a) add(a, static_cast<std::uint32_t>(geometry.block[a]));
  for (const auto& [name, constant] : constants) {
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
      out.refusal = "the shader's specialization constant " + name +
                    " matches no integer parameter of the config and no dim of the problem";
      out.unmatched = true;
      return out;
    }
    if (*value < std::numeric_limits<std::int32_t>::min() || *value > std::numeric_limits<std::uint32_t>::max()) {
      out.refusal = "specialization constant " + name + " = " + std::to_string(*value) + " does not fit 32 bits";
      return out;
    }
    add(constant.id, static_cast<std::uint32_t>(*value));
  }
  return out;
}

VkShaderModule create_shader_module(VkDevice device, const std::vector<std::uint32_t>& words) {
  VkShaderModuleCreateInfo create{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  create.codeSize = words.size() * sizeof(std::uint32_t);
  create.pCode = words.data();
  VkShaderModule module = VK_NULL_HANDLE;
  KT_VK(vkCreateShaderModule(device, &create, nullptr, &module));
  return module;
}

VulkanPipeline::VulkanPipeline(VkDevice d, VkShaderModule module, const Specialization& specialization,
                               VkPipelineLayout layout, VkPipelineCreateFlags flags)
    : device(d) {
  VulkanLibrary& vk = VulkanLibrary::get();
  const VkSpecializationInfo info = specialization.info();
  VkComputePipelineCreateInfo create{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  create.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
  create.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  create.stage.module = module;
  create.stage.pName = "main";
  create.stage.pSpecializationInfo = &info;
  create.layout = layout;
  create.flags = flags;
  result = vk.vkCreateComputePipelines(device, VK_NULL_HANDLE, 1, &create, nullptr, &pipeline);
  if (result == VK_ERROR_DEVICE_LOST) vk.check(result, "vkCreateComputePipelines", __FILE__, __LINE__);
  if (result != VK_SUCCESS) pipeline = VK_NULL_HANDLE;
}

VulkanPipeline::~VulkanPipeline() {
  if (pipeline) VulkanLibrary::get().vkDestroyPipeline(device, pipeline, nullptr);
}

void record_dispatch(VkCommandBuffer commands, VkPipeline pipeline, const VulkanBindings& bindings,
                     const std::vector<std::uint32_t>& push_constants, const WorkgroupGeometry& geometry) {
  VulkanLibrary& vk = VulkanLibrary::get();
  const VkDescriptorSet set = bindings.descriptor_set();
  vk.vkCmdBindPipeline(commands, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
  vk.vkCmdBindDescriptorSets(commands, VK_PIPELINE_BIND_POINT_COMPUTE, bindings.pipeline_layout(), 0, 1, &set, 0,
                             nullptr);
  if (!push_constants.empty())
    vk.vkCmdPushConstants(commands, bindings.pipeline_layout(), VK_SHADER_STAGE_COMPUTE_BIT, 0,
                          static_cast<std::uint32_t>(push_constants.size() * sizeof(std::uint32_t)),
                          push_constants.data());
  vk.vkCmdDispatch(commands, static_cast<std::uint32_t>(geometry.grid[0]), static_cast<std::uint32_t>(geometry.grid[1]),
                   static_cast<std::uint32_t>(geometry.grid[2]));
}

}  // namespace ktune
