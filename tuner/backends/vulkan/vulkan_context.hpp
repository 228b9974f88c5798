// One Vulkan device ready for compute: the instance, the chosen physical device (discrete GPUs
// first, lavapipe, Mesa's CPU implementation, last), a logical device with every feature the
// shaders may use (16-bit storage, float16, cooperative matrices when offered), a compute queue
// with timestamps, and the device's fingerprint and limits for the search spaces.
#pragma once

#include <cstdint>
#include <memory>

#include <nlohmann/json.hpp>

#include "tuner/backends/vulkan/vulkan_library.hpp"
#include "tuner/core/device.hpp"

namespace ktune {

// The number of Vulkan devices, lavapipe included (0 when there is no loader or no driver).
int vulkan_device_count();
// True when one of them is a GPU rather than lavapipe: Vulkan is then worth choosing by default.
bool vulkan_gpu_present();

// The limits of a kind of Vulkan device, for building constrained spaces without one:
// "nvidia" (NVIDIA's driver as measured on an H200) or "lavapipe" (Mesa's CPU driver).
DeviceInfo nominal_vulkan_device(const std::string& kind);

class VulkanContext {
 public:
  // BackendUnavailable when there is no loader, no device `index`, or the device lacks Vulkan 1.2.
  explicit VulkanContext(int index);
  ~VulkanContext();
  VulkanContext(const VulkanContext&) = delete;
  VulkanContext& operator=(const VulkanContext&) = delete;

  VkDevice device() const { return device_; }
  VkQueue queue() const { return queue_; }
  std::uint32_t queue_family() const { return queue_family_; }
  const DeviceInfo& info() const { return info_; }
  double timestamp_period_ns() const { return timestamp_period_ns_; }
  std::uint32_t timestamp_valid_bits() const { return timestamp_valid_bits_; }
  bool is_cpu() const { return is_cpu_; }
  VkDeviceSize max_storage_buffer_range() const { return max_storage_buffer_range_; }
  // The driver's statistics of a pipeline created with VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR
  // (name -> value, e.g. registers per invocation); empty where the device offers none.
  bool captures_pipeline_statistics() const { return pipeline_statistics_; }
  nlohmann::json pipeline_statistics(VkPipeline pipeline) const;
  // A memory type with all of `required` among those in `allowed_bits`; VulkanError when none.
  std::uint32_t memory_type(std::uint32_t allowed_bits, VkMemoryPropertyFlags required) const;

 private:
  VkInstance instance_ = VK_NULL_HANDLE;
  VkPhysicalDevice physical_ = VK_NULL_HANDLE;
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  std::uint32_t queue_family_ = 0;
  VkPhysicalDeviceMemoryProperties memory_{};
  DeviceInfo info_;
  double timestamp_period_ns_ = 1;
  std::uint32_t timestamp_valid_bits_ = 64;
  bool is_cpu_ = false;
  VkDeviceSize max_storage_buffer_range_ = 0;
  bool pipeline_statistics_ = false;
  PFN_vkGetPipelineExecutablePropertiesKHR get_executable_properties_ = nullptr;
  PFN_vkGetPipelineExecutableStatisticsKHR get_executable_statistics_ = nullptr;
};

}  // namespace ktune
