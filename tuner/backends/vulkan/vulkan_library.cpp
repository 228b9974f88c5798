#include "tuner/backends/vulkan/vulkan_library.hpp"

#include <dlfcn.h>

#include "tuner/core/errors.hpp"

namespace ktune {

const char* vk_result_name(VkResult result) {
  switch (result) {
    case VK_SUCCESS: return "VK_SUCCESS";
    case VK_NOT_READY: return "VK_NOT_READY";
    case VK_TIMEOUT: return "VK_TIMEOUT";
    case VK_INCOMPLETE: return "VK_INCOMPLETE";
    case VK_ERROR_OUT_OF_HOST_MEMORY: return "VK_ERROR_OUT_OF_HOST_MEMORY";
    case VK_ERROR_OUT_OF_DEVICE_MEMORY: return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
    case VK_ERROR_INITIALIZATION_FAILED: return "VK_ERROR_INITIALIZATION_FAILED";
    case VK_ERROR_DEVICE_LOST: return "VK_ERROR_DEVICE_LOST";
    case VK_ERROR_MEMORY_MAP_FAILED: return "VK_ERROR_MEMORY_MAP_FAILED";
    case VK_ERROR_LAYER_NOT_PRESENT: return "VK_ERROR_LAYER_NOT_PRESENT";
    case VK_ERROR_EXTENSION_NOT_PRESENT: return "VK_ERROR_EXTENSION_NOT_PRESENT";
    case VK_ERROR_FEATURE_NOT_PRESENT: return "VK_ERROR_FEATURE_NOT_PRESENT";
    case VK_ERROR_INCOMPATIBLE_DRIVER: return "VK_ERROR_INCOMPATIBLE_DRIVER";
    case VK_ERROR_TOO_MANY_OBJECTS: return "VK_ERROR_TOO_MANY_OBJECTS";
    case VK_ERROR_FORMAT_NOT_SUPPORTED: return "VK_ERROR_FORMAT_NOT_SUPPORTED";
    case VK_ERROR_FRAGMENTED_POOL: return "VK_ERROR_FRAGMENTED_POOL";
    case VK_ERROR_OUT_OF_POOL_MEMORY: return "VK_ERROR_OUT_OF_POOL_MEMORY";
    case VK_ERROR_INVALID_SHADER_NV: return "VK_ERROR_INVALID_SHADER_NV";
    default: return "VkResult (unnamed)";
  }
}

VulkanLibrary::VulkanLibrary() {
  handle_ = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!handle_)
    throw BackendUnavailable(std::string("no Vulkan loader: libvulkan.so.1 could not be opened (") + dlerror() +
                             "); install Debian's libvulkan1 and a driver (mesa-vulkan-drivers for lavapipe, or "
                             "the GPU vendor's), or point LD_LIBRARY_PATH at a loader");
  get_instance_proc_addr_ = reinterpret_cast<PFN_vkGetInstanceProcAddr>(dlsym(handle_, "vkGetInstanceProcAddr"));
  if (!get_instance_proc_addr_) throw BackendUnavailable("libvulkan.so.1 has no vkGetInstanceProcAddr");
#define KT_VK_GLOBAL(name) name = reinterpret_cast<PFN_##name>(get_instance_proc_addr_(nullptr, #name));
#define KT_VK_INSTANCE(name)
#include "tuner/backends/vulkan/vulkan_functions.inc"
#undef KT_VK_GLOBAL
#undef KT_VK_INSTANCE
  if (!vkCreateInstance) throw BackendUnavailable("the Vulkan loader offers no vkCreateInstance");
}

VulkanLibrary& VulkanLibrary::get() {
  static VulkanLibrary library;
  return library;
}

void VulkanLibrary::load_instance(VkInstance instance) {
#define KT_VK_GLOBAL(name)
#define KT_VK_INSTANCE(name)                                                             \
  name = reinterpret_cast<PFN_##name>(get_instance_proc_addr_(instance, #name));         \
  if (!name) throw BackendUnavailable("the Vulkan loader offers no " #name " (Vulkan 1.2 or later is needed)");
#include "tuner/backends/vulkan/vulkan_functions.inc"
#undef KT_VK_GLOBAL
#undef KT_VK_INSTANCE
}

PFN_vkVoidFunction VulkanLibrary::instance_function(VkInstance instance, const char* name) const {
  return get_instance_proc_addr_(instance, name);
}

void VulkanLibrary::check(VkResult result, const char* call, const char* file, int line) const {
  if (result == VK_SUCCESS) return;
  std::string what = call;
  if (const auto paren = what.find('('); paren != std::string::npos) what.resize(paren);
  throw VulkanError(result, what + " failed: " + vk_result_name(result) + " (" + std::to_string(result) + ") at " +
                                file + ":" + std::to_string(line));
}

}  // namespace ktune
