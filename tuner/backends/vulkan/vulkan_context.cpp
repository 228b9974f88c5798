#include "tuner/backends/vulkan/vulkan_context.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "tuner/core/errors.hpp"

namespace ktune {
namespace {

// Discrete GPUs first, lavapipe (a CPU) last: index 0 is the device a user most likely means.
int type_rank(VkPhysicalDeviceType type) {
  switch (type) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return 0;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return 1;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return 2;
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return 4;
    default: return 3;
  }
}

const char* type_name(VkPhysicalDeviceType type) {
  switch (type) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete_gpu";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated_gpu";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual_gpu";
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return "cpu";
    default: return "other";
  }
}

std::string version_text(std::uint32_t version) {
  return std::to_string(VK_API_VERSION_MAJOR(version)) + "." + std::to_string(VK_API_VERSION_MINOR(version)) + "." +
         std::to_string(VK_API_VERSION_PATCH(version));
}

VkInstance create_instance() {
  VulkanLibrary& vk = VulkanLibrary::get();
  std::uint32_t loader_version = VK_API_VERSION_1_0;
  if (vk.vkEnumerateInstanceVersion) vk.vkEnumerateInstanceVersion(&loader_version);
  if (loader_version < VK_API_VERSION_1_2)
    throw BackendUnavailable("the Vulkan loader supports Vulkan " + version_text(loader_version) + "; ktune needs 1.2");
  VkApplicationInfo application{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  application.pApplicationName = "ktune";
  application.apiVersion = VK_API_VERSION_1_2;
  VkInstanceCreateInfo create{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  create.pApplicationInfo = &application;
  VkInstance instance = VK_NULL_HANDLE;
  const VkResult result = vk.vkCreateInstance(&create, nullptr, &instance);
  if (result == VK_ERROR_INCOMPATIBLE_DRIVER)
    throw BackendUnavailable("no Vulkan driver: the loader found no installable client driver (install "
                             "mesa-vulkan-drivers for lavapipe, or set VK_DRIVER_FILES to the GPU vendor's ICD JSON)");
  vk.check(result, "vkCreateInstance", __FILE__, __LINE__);
  vk.load_instance(instance);
  return instance;
}

std::vector<VkPhysicalDevice> ordered_devices(VkInstance instance) {
  VulkanLibrary& vk = VulkanLibrary::get();
  std::uint32_t count = 0;
  vk.check(vk.vkEnumeratePhysicalDevices(instance, &count, nullptr), "vkEnumeratePhysicalDevices", __FILE__, __LINE__);
  std::vector<VkPhysicalDevice> devices(count);
  vk.check(vk.vkEnumeratePhysicalDevices(instance, &count, devices.data()), "vkEnumeratePhysicalDevices", __FILE__, __LINE__);
  std::stable_sort(devices.begin(), devices.end(), [&](VkPhysicalDevice a, VkPhysicalDevice b) {
    VkPhysicalDeviceProperties pa{}, pb{};
    vk.vkGetPhysicalDeviceProperties(a, &pa);
    vk.vkGetPhysicalDeviceProperties(b, &pb);
    return type_rank(pa.deviceType) < type_rank(pb.deviceType);
  });
  return devices;
}

// Inserts the optional feature structure `next` right after `head` in head's pNext chain.
template <typename Head, typename Next>
void chain_after(Head& head, Next& next) {
  next.pNext = head.pNext;
  head.pNext = &next;
}

bool has_extension(VkPhysicalDevice device, const char* name) {
  VulkanLibrary& vk = VulkanLibrary::get();
  std::uint32_t count = 0;
  vk.vkEnumerateDeviceExtensionProperties(device, nullptr, &count, nullptr);
  std::vector<VkExtensionProperties> extensions(count);
  vk.vkEnumerateDeviceExtensionProperties(device, nullptr, &count, extensions.data());
  return std::any_of(extensions.begin(), extensions.end(),
                     [&](const VkExtensionProperties& e) { return std::strcmp(e.extensionName, name) == 0; });
}

// True when VK_NV_cooperative_matrix offers 16x16x16 tiles of fp16 inputs with fp32
// accumulators per subgroup: the shape the cooperative-matrix GEMM uses.
bool has_fp16_cooperative_matrix(VkInstance instance, VkPhysicalDevice device) {
  if (!has_extension(device, VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME)) return false;
  auto list = reinterpret_cast<PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesNV>(
      VulkanLibrary::get().instance_function(instance, "vkGetPhysicalDeviceCooperativeMatrixPropertiesNV"));
  if (!list) return false;
  std::uint32_t count = 0;
  list(device, &count, nullptr);
  std::vector<VkCooperativeMatrixPropertiesNV> shapes(count, {VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_NV});
  list(device, &count, shapes.data());
  return std::any_of(shapes.begin(), shapes.end(), [](const VkCooperativeMatrixPropertiesNV& s) {
    return s.MSize == 16 && s.NSize == 16 && s.KSize == 16 && s.AType == VK_COMPONENT_TYPE_FLOAT16_NV &&
           s.BType == VK_COMPONENT_TYPE_FLOAT16_NV && s.CType == VK_COMPONENT_TYPE_FLOAT32_NV &&
           s.DType == VK_COMPONENT_TYPE_FLOAT32_NV && s.scope == VK_SCOPE_SUBGROUP_NV;
  });
}

}  // namespace

int vulkan_device_count() {
  try {
    VkInstance instance = create_instance();
    const int count = static_cast<int>(ordered_devices(instance).size());
    VulkanLibrary::get().vkDestroyInstance(instance, nullptr);
    return count;
  } catch (const std::exception&) {
    return 0;
  }
}

DeviceInfo nominal_vulkan_device(const std::string& kind) {
  const bool nvidia = kind == "nvidia";
  DeviceInfo info;
  info.backend = "vulkan";
  info.vendor = nvidia ? "nvidia" : "mesa";
  info.architecture = nvidia ? "discrete_gpu" : "cpu";
  info.name = "nominal " + kind + " Vulkan device (compile-only)";
  info.limits = {{"max_threads_per_block", 1024},
                 {"max_shared_memory_per_block", nvidia ? 49152 : 32768},
                 {"subgroup_size", nvidia ? 32 : 8},
                 {"warp_size", nvidia ? 32 : 8},
                 {"max_grid_x", nvidia ? 2147483647 : 65535},
                 {"max_grid_y", 65535},
                 {"max_grid_z", 65535},
                 {"max_block_x", 1024},
                 {"max_block_y", 1024},
                 {"max_block_z", nvidia ? 64 : 1024},
                 {"max_storage_buffer_bytes", nvidia ? 4294967295 : 134217728},
                 {"has_cooperative_matrix", nvidia ? 1 : 0},
                 {"has_float16_arithmetic", 1},
                 {"device_is_cpu", nvidia ? 0 : 1},
                 {"memory_bytes", std::int64_t{nvidia ? 141 : 16} << 30}};
  info.properties = {{"nominal", true}, {"compile_arch", "spirv"}};
  info.fingerprint = "vulkan|nominal|" + kind;
  return info;
}

bool vulkan_gpu_present() {
  try {
    VkInstance instance = create_instance();
    VulkanLibrary& vk = VulkanLibrary::get();
    bool gpu = false;
    for (VkPhysicalDevice device : ordered_devices(instance)) {
      VkPhysicalDeviceProperties properties{};
      vk.vkGetPhysicalDeviceProperties(device, &properties);
      gpu = gpu || properties.deviceType != VK_PHYSICAL_DEVICE_TYPE_CPU;
    }
    vk.vkDestroyInstance(instance, nullptr);
    return gpu;
  } catch (const std::exception&) {
    return false;
  }
}

VulkanContext::VulkanContext(int index) {
  VulkanLibrary& vk = VulkanLibrary::get();
  instance_ = create_instance();
  const auto devices = ordered_devices(instance_);
  if (devices.empty()) throw BackendUnavailable("no Vulkan device: the Vulkan drivers report none");
  if (index < 0 || index >= static_cast<int>(devices.size()))
    throw BackendUnavailable("no Vulkan device " + std::to_string(index) + ": this machine has " +
                             std::to_string(devices.size()));
  physical_ = devices[static_cast<std::size_t>(index)];

  VkPhysicalDeviceDriverProperties driver{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
  VkPhysicalDeviceSubgroupProperties subgroup{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
  subgroup.pNext = &driver;
  VkPhysicalDeviceProperties2 properties2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  properties2.pNext = &subgroup;
  vk.vkGetPhysicalDeviceProperties2(physical_, &properties2);
  const VkPhysicalDeviceProperties& properties = properties2.properties;
  if (properties.apiVersion < VK_API_VERSION_1_2)
    throw BackendUnavailable(std::string("Vulkan device ") + properties.deviceName + " supports Vulkan " +
                             version_text(properties.apiVersion) + "; ktune needs 1.2");
  vk.vkGetPhysicalDeviceMemoryProperties(physical_, &memory_);

  // A queue that computes and stamps time.
  std::uint32_t family_count = 0;
  vk.vkGetPhysicalDeviceQueueFamilyProperties(physical_, &family_count, nullptr);
  std::vector<VkQueueFamilyProperties> families(family_count);
  vk.vkGetPhysicalDeviceQueueFamilyProperties(physical_, &family_count, families.data());
  bool found = false;
  for (std::uint32_t f = 0; f < family_count && !found; ++f)
    if ((families[f].queueFlags & VK_QUEUE_COMPUTE_BIT) && families[f].timestampValidBits > 0) {
      queue_family_ = f;
      timestamp_valid_bits_ = families[f].timestampValidBits;
      found = true;
    }
  if (!found)
    throw BackendUnavailable(std::string("Vulkan device ") + properties.deviceName +
                             " has no compute queue with timestamps (timestampValidBits 0)");
  timestamp_period_ns_ = properties.limits.timestampPeriod;

  // Features: only those the shaders use. Robust buffer access stays off: it bounds-checks every
  // access and would be measured as part of every kernel.
  get_executable_properties_ = reinterpret_cast<PFN_vkGetPipelineExecutablePropertiesKHR>(
      vk.instance_function(instance_, "vkGetPipelineExecutablePropertiesKHR"));
  get_executable_statistics_ = reinterpret_cast<PFN_vkGetPipelineExecutableStatisticsKHR>(
      vk.instance_function(instance_, "vkGetPipelineExecutableStatisticsKHR"));
  const bool cooperative = has_fp16_cooperative_matrix(instance_, physical_);
  // Pipeline statistics (registers, spills, shared memory per variant, as the driver reports
  // them) are recorded with each result: they explain a slow variant without a profiler.
  const bool executable_extension = has_extension(physical_, VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
  VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR executable_features{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};
  VkPhysicalDeviceCooperativeMatrixFeaturesNV cooperative_features{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV};
  VkPhysicalDeviceVulkan12Features features12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  if (executable_extension) chain_after(features12, executable_features);
  if (cooperative) chain_after(features12, cooperative_features);
  VkPhysicalDeviceVulkan11Features features11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  features11.pNext = &features12;
  VkPhysicalDeviceFeatures2 supported{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  supported.pNext = &features11;
  vk.vkGetPhysicalDeviceFeatures2(physical_, &supported);
  if (!features11.storageBuffer16BitAccess)
    throw BackendUnavailable(std::string("Vulkan device ") + properties.deviceName +
                             " lacks storageBuffer16BitAccess (16-bit storage buffers), which ktune's shaders use");
  const bool use_cooperative = cooperative && cooperative_features.cooperativeMatrix;
  pipeline_statistics_ = executable_extension && executable_features.pipelineExecutableInfo &&
                         get_executable_properties_ && get_executable_statistics_;

  VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR enable_executable{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};
  enable_executable.pipelineExecutableInfo = VK_TRUE;
  VkPhysicalDeviceCooperativeMatrixFeaturesNV enable_cooperative{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV};
  enable_cooperative.cooperativeMatrix = VK_TRUE;
  VkPhysicalDeviceVulkan12Features enable12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  if (pipeline_statistics_) chain_after(enable12, enable_executable);
  if (use_cooperative) chain_after(enable12, enable_cooperative);
  enable12.shaderFloat16 = features12.shaderFloat16;
  enable12.shaderInt8 = features12.shaderInt8;
  enable12.storageBuffer8BitAccess = features12.storageBuffer8BitAccess;
  enable12.vulkanMemoryModel = features12.vulkanMemoryModel;
  enable12.vulkanMemoryModelDeviceScope = features12.vulkanMemoryModelDeviceScope;
  VkPhysicalDeviceVulkan11Features enable11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  enable11.pNext = &enable12;
  enable11.storageBuffer16BitAccess = VK_TRUE;
  enable11.uniformAndStorageBuffer16BitAccess = features11.uniformAndStorageBuffer16BitAccess;
  enable11.storagePushConstant16 = features11.storagePushConstant16;
  VkPhysicalDeviceFeatures2 enable{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  enable.pNext = &enable11;
  enable.features.shaderInt16 = supported.features.shaderInt16;
  enable.features.shaderInt64 = supported.features.shaderInt64;
  enable.features.shaderFloat64 = supported.features.shaderFloat64;

  const float priority = 1.0f;
  VkDeviceQueueCreateInfo queue_create{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  queue_create.queueFamilyIndex = queue_family_;
  queue_create.queueCount = 1;
  queue_create.pQueuePriorities = &priority;
  std::vector<const char*> extensions;
  if (use_cooperative) extensions.push_back(VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME);
  if (pipeline_statistics_) extensions.push_back(VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
  VkDeviceCreateInfo device_create{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  device_create.pNext = &enable;
  device_create.queueCreateInfoCount = 1;
  device_create.pQueueCreateInfos = &queue_create;
  device_create.enabledExtensionCount = static_cast<std::uint32_t>(extensions.size());
  device_create.ppEnabledExtensionNames = extensions.data();
  vk.check(vk.vkCreateDevice(physical_, &device_create, nullptr, &device_), "vkCreateDevice", __FILE__, __LINE__);
  vk.vkGetDeviceQueue(device_, queue_family_, 0, &queue_);

  is_cpu_ = properties.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
  max_storage_buffer_range_ = properties.limits.maxStorageBufferRange;
  std::int64_t device_memory = 0;
  for (std::uint32_t h = 0; h < memory_.memoryHeapCount; ++h)
    if (memory_.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)
      device_memory = std::max<std::int64_t>(device_memory, static_cast<std::int64_t>(memory_.memoryHeaps[h].size));

  const auto& limits = properties.limits;
  info_.backend = "vulkan";
  info_.name = properties.deviceName;
  const std::uint32_t vendor = properties.vendorID;
  info_.vendor = vendor == 0x10DE ? "nvidia" : vendor == 0x1002 ? "amd" : vendor == 0x8086 ? "intel"
                 : vendor == 0x10005 ? "mesa" : "vendor 0x" + [&] {
                     char hex[16];
                     std::snprintf(hex, sizeof hex, "%x", vendor);
                     return std::string(hex);
                   }();
  info_.architecture = type_name(properties.deviceType);
  info_.limits = {{"max_threads_per_block", limits.maxComputeWorkGroupInvocations},
                  {"max_shared_memory_per_block", limits.maxComputeSharedMemorySize},
                  {"subgroup_size", subgroup.subgroupSize},
                  {"warp_size", subgroup.subgroupSize},
                  {"max_grid_x", limits.maxComputeWorkGroupCount[0]},
                  {"max_grid_y", limits.maxComputeWorkGroupCount[1]},
                  {"max_grid_z", limits.maxComputeWorkGroupCount[2]},
                  {"max_block_x", limits.maxComputeWorkGroupSize[0]},
                  {"max_block_y", limits.maxComputeWorkGroupSize[1]},
                  {"max_block_z", limits.maxComputeWorkGroupSize[2]},
                  {"max_storage_buffer_bytes", static_cast<std::int64_t>(limits.maxStorageBufferRange)},
                  {"has_cooperative_matrix", use_cooperative ? 1 : 0},
                  {"has_float16_arithmetic", features12.shaderFloat16 ? 1 : 0},
                  {"device_is_cpu", is_cpu_ ? 1 : 0},
                  {"memory_bytes", device_memory}};
  info_.properties = {{"api_version", version_text(properties.apiVersion)},
                      {"driver_version", properties.driverVersion},
                      {"driver_name", driver.driverName},
                      {"driver_info", driver.driverInfo},
                      {"device_type", type_name(properties.deviceType)},
                      {"vendor_id", vendor},
                      {"device_id", properties.deviceID},
                      {"timestamp_period_ns", timestamp_period_ns_},
                      {"timestamp_valid_bits", timestamp_valid_bits_},
                      {"cooperative_matrix", use_cooperative ? "VK_NV_cooperative_matrix fp16 16x16x16" : "none"},
                      {"pipeline_statistics", pipeline_statistics_},
                      {"device_count", devices.size()}};
  info_.fingerprint = "vulkan|" + info_.name + "|" + std::to_string(vendor) + ":" + std::to_string(properties.deviceID) +
                      "|driver=" + driver.driverName + " " + driver.driverInfo + "|api=" + version_text(properties.apiVersion);
}

VulkanContext::~VulkanContext() {
  VulkanLibrary& vk = VulkanLibrary::get();
  if (device_) vk.vkDestroyDevice(device_, nullptr);
  if (instance_) vk.vkDestroyInstance(instance_, nullptr);
}

std::uint32_t VulkanContext::memory_type(std::uint32_t allowed_bits, VkMemoryPropertyFlags required) const {
  for (std::uint32_t t = 0; t < memory_.memoryTypeCount; ++t)
    if ((allowed_bits & (1u << t)) && (memory_.memoryTypes[t].propertyFlags & required) == required) return t;
  throw VulkanError(VK_ERROR_FEATURE_NOT_PRESENT, "no Vulkan memory type with the properties needed (flags " +
                                                       std::to_string(required) + ")");
}

nlohmann::json VulkanContext::pipeline_statistics(VkPipeline pipeline) const {
  nlohmann::json statistics = nlohmann::json::object();
  if (!pipeline_statistics_) return statistics;
  VkPipelineInfoKHR info{VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR};
  info.pipeline = pipeline;
  std::uint32_t count = 0;
  if (get_executable_properties_(device_, &info, &count, nullptr) != VK_SUCCESS || count == 0) return statistics;
  // A compute pipeline has one executable (the compute shader).
  VkPipelineExecutableInfoKHR executable{VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR};
  executable.pipeline = pipeline;
  executable.executableIndex = 0;
  std::uint32_t stat_count = 0;
  if (get_executable_statistics_(device_, &executable, &stat_count, nullptr) != VK_SUCCESS) return statistics;
  std::vector<VkPipelineExecutableStatisticKHR> stats(stat_count, {VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR});
  if (get_executable_statistics_(device_, &executable, &stat_count, stats.data()) != VK_SUCCESS) return statistics;
  for (const auto& stat : stats) {
    switch (stat.format) {
      case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR: statistics[stat.name] = stat.value.b32 != 0; break;
      case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR: statistics[stat.name] = stat.value.i64; break;
      case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR: statistics[stat.name] = stat.value.u64; break;
      case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_FLOAT64_KHR: statistics[stat.name] = stat.value.f64; break;
      default: break;
    }
  }
  return statistics;
}

}  // namespace ktune
