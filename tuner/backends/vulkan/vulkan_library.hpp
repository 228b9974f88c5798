// The Vulkan loader (libvulkan.so.1), opened at run time: ktune runs where there is none (the
// GPU machine carries one; see README) and then says what is missing instead of failing to start.
// Entry points are plain members of VulkanLibrary (vk.vkCreateBuffer(...)); KT_VK checks a
// VkResult and throws VulkanError naming the call.
#pragma once

#include <stdexcept>
#include <string>

#include <vulkan/vulkan.h>

namespace ktune {

class VulkanError : public std::runtime_error {
 public:
  VulkanError(VkResult result, const std::string& what) : std::runtime_error(what), result_(result) {}
  VkResult result() const { return result_; }
  // The device is gone (a crashed or hung shader): nothing more can run on it in this process.
  bool sticky() const { return result_ == VK_ERROR_DEVICE_LOST; }

 private:
  VkResult result_;
};

// "VK_ERROR_OUT_OF_DEVICE_MEMORY" and so on.
const char* vk_result_name(VkResult result);

class VulkanLibrary {
 public:
  // BackendUnavailable when libvulkan.so.1 cannot be opened.
  static VulkanLibrary& get();
  // Loads the instance-level entry points once an instance exists.
  void load_instance(VkInstance instance);
  // Null when the loader or driver does not offer it (an extension's entry point).
  PFN_vkVoidFunction instance_function(VkInstance instance, const char* name) const;

  void check(VkResult result, const char* call, const char* file, int line) const;

#define KT_VK_GLOBAL(name) PFN_##name name = nullptr;
#define KT_VK_INSTANCE(name) PFN_##name name = nullptr;
#include "tuner/backends/vulkan/vulkan_functions.inc"
#undef KT_VK_GLOBAL
#undef KT_VK_INSTANCE

 private:
  VulkanLibrary();
  void* handle_ = nullptr;
  PFN_vkGetInstanceProcAddr get_instance_proc_addr_ = nullptr;
};

#define KT_VK(call) ::ktune::VulkanLibrary::get().check(::ktune::VulkanLibrary::get().call, #call, __FILE__, __LINE__)

}  // namespace ktune
