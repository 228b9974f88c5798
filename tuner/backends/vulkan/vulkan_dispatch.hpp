// One dispatch of a family's shader, as both the tuner's Vulkan backend and the kernel library
// (library/src/vulkan_executor.cpp) issue it, following the contract of
// kernels/common/vulkan_common.glsl: binding i is tensor i (a storage buffer, in
// KernelFamily::tensors() order), the dims are 32-bit push constants in the problem's order, the
// workgroup size is specialization constants 0-2, and every other specialization constant is
// found by name: KT_DIM_<DIM> takes a dim, KT_<PARAMETER> an integer parameter of the config.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "kernels/family.hpp"
#include "tuner/backends/vulkan/spirv_reflection.hpp"
#include "tuner/backends/vulkan/vulkan_context.hpp"
#include "tuner/core/config.hpp"

namespace ktune {

constexpr VkMemoryPropertyFlags kVulkanDeviceLocal = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
constexpr VkMemoryPropertyFlags kVulkanHostVisible =
    VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;

// A storage buffer and its memory, released with the object. Sizes are rounded up to 4 bytes, so
// that vkCmdFillBuffer (which works in 4-byte words) reaches every element. Host-visible memory
// stays mapped (`mapped`).
struct VulkanBuffer {
  VkDevice device = VK_NULL_HANDLE;
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  VkDeviceSize bytes = 0;
  void* mapped = nullptr;

  VulkanBuffer(const VulkanContext& context, VkDeviceSize size, VkMemoryPropertyFlags properties);
  VulkanBuffer(const VulkanBuffer&) = delete;
  VulkanBuffer& operator=(const VulkanBuffer&) = delete;
  ~VulkanBuffer();
};

// One command buffer, recorded, submitted and waited for at a time.
class VulkanSubmitter {
 public:
  explicit VulkanSubmitter(const VulkanContext& context);
  ~VulkanSubmitter();
  VulkanSubmitter(const VulkanSubmitter&) = delete;
  VulkanSubmitter& operator=(const VulkanSubmitter&) = delete;

  VkCommandBuffer commands() const { return commands_; }
  // Records commands with `record`, submits them and waits for the device to finish them.
  template <typename Record>
  void submit(Record record) {
    begin_one_time();
    record(commands_);
    end_and_run();
  }
  // Submits the command buffer as last recorded and waits for it.
  void run_recorded();

 private:
  void begin_one_time();
  void end_and_run();
  const VulkanContext& context_;
  VkCommandPool pool_ = VK_NULL_HANDLE;
  VkCommandBuffer commands_ = VK_NULL_HANDLE;
  VkFence fence_ = VK_NULL_HANDLE;
};

// Makes the writes of `source` stages visible to the reads of `destination` stages.
void vulkan_barrier(VkCommandBuffer commands, VkPipelineStageFlags source, VkAccessFlags source_access,
                    VkPipelineStageFlags destination, VkAccessFlags destination_access);

// The problem's dims as the shaders' push constants; `unsupported` says why when one does not
// fit 32 bits (left empty when all do).
std::vector<std::uint32_t> dims_as_push_constants(const Problem& problem, std::string& unsupported);

// The layout every shader of a family binds: `count` storage buffers and `push_bytes` of push
// constants, with one descriptor set. Destroyed with the object.
class VulkanBindings {
 public:
  VulkanBindings(VkDevice device, std::uint32_t count, std::uint32_t push_bytes);
  ~VulkanBindings();
  VulkanBindings(const VulkanBindings&) = delete;
  VulkanBindings& operator=(const VulkanBindings&) = delete;

  VkPipelineLayout pipeline_layout() const { return pipeline_layout_; }
  VkDescriptorSet descriptor_set() const { return descriptor_set_; }
  // Points binding i at buffers[i] (whole buffers). Not while a dispatch that uses the set runs.
  void bind(std::span<const VkBuffer> buffers);

 private:
  VkDevice device_;
  VkDescriptorSetLayout set_layout_ = VK_NULL_HANDLE;
  VkPipelineLayout pipeline_layout_ = VK_NULL_HANDLE;
  VkDescriptorPool descriptor_pool_ = VK_NULL_HANDLE;
  VkDescriptorSet descriptor_set_ = VK_NULL_HANDLE;
};

// A dispatch's geometry, from the launch values a space derives (grid_x/y/z, block_x/y/z).
struct WorkgroupGeometry {
  std::array<std::int64_t, 3> grid;
  std::array<std::int64_t, 3> block;
};
WorkgroupGeometry workgroup_geometry(const std::map<std::string, std::int64_t>& launch);
// Why the device cannot launch `geometry` (a grid or workgroup outside its limits); empty when
// it can.
std::string launch_refusal(const DeviceInfo& device, const WorkgroupGeometry& geometry);

// The values of a module's specialization constants for one config, problem and workgroup size.
struct Specialization {
  std::vector<VkSpecializationMapEntry> entries;
  std::vector<std::uint32_t> data;
  // Why it could not be filled (empty when it was): a constant that matches nothing
  // (`unmatched`, a shader that does not fit its space) or a value that does not fit 32 bits.
  std::string refusal;
  bool unmatched = false;
  VkSpecializationInfo info() const;
};
Specialization specialization_for(const std::map<std::string, SpecializationConstant>& constants,
                                  const WorkgroupGeometry& geometry, const Config& config, const Problem& problem);

// A shader module of `words`; the caller destroys it.
VkShaderModule create_shader_module(VkDevice device, const std::vector<std::uint32_t>& words);

// A compute pipeline, destroyed with the object; `result` is what vkCreateComputePipelines said
// (the pipeline is null unless VK_SUCCESS). Throws VulkanError only for a lost device.
struct VulkanPipeline {
  VkDevice device;
  VkPipeline pipeline = VK_NULL_HANDLE;
  VkResult result = VK_SUCCESS;
  VulkanPipeline(VkDevice device, VkShaderModule module, const Specialization& specialization,
                 VkPipelineLayout layout, VkPipelineCreateFlags flags = 0);
  VulkanPipeline(const VulkanPipeline&) = delete;
  VulkanPipeline& operator=(const VulkanPipeline&) = delete;
  ~VulkanPipeline();
};

// Records one dispatch: the pipeline, the bindings' descriptor set, the push constants.
void record_dispatch(VkCommandBuffer commands, VkPipeline pipeline, const VulkanBindings& bindings,
                     const std::vector<std::uint32_t>& push_constants, const WorkgroupGeometry& geometry);

}  // namespace ktune
