#include "tuner/backends/hip/hip_device.hpp"

#include <regex>

#include "tuner/backends/hip/hip_library.hpp"
#include "tuner/core/errors.hpp"

namespace ktune {
std::string hip_target_of(const std::string& gcn_arch_name) { return gcn_arch_name.substr(0, gcn_arch_name.find(':')); }

bool valid_hip_arch(const std::string& arch) { return std::regex_match(arch, std::regex("gfx[0-9a-f]{3,4}")); }

int hip_device_count() {
  try {
    int count = 0;
    // hipErrorNoDevice (no AMD GPU, or no amdgpu driver) is an answer: none.
    if (HipLibrary::device_runtime().hipGetDeviceCount(&count) == hipSuccess) return count;
  } catch (const BackendUnavailable&) {
  }
  return 0;
}

DeviceInfo nominal_hip_device(const std::string& arch) {
  if (!valid_hip_arch(arch))
    throw InputError("--arch: '" + arch + "' is not an AMD GPU target such as gfx90a, gfx940 or gfx1030");
  DeviceInfo info;
  info.backend = "hip";
  info.vendor = "amd";
  info.architecture = arch;
  info.name = "nominal " + arch + " GPU (compile-only)";
  // CDNA (gfx9xx: MI200, MI300) runs wavefronts of 64 lanes; RDNA (gfx10xx, gfx11xx) of 32, the
  // default of hiprtc there. Every AMD GPU has 64 KiB of LDS (shared memory) per workgroup.
  const bool cdna = arch.size() == 6 && arch.rfind("gfx9", 0) == 0;
  const bool mi300 = arch.rfind("gfx94", 0) == 0;
  info.limits = {{"max_threads_per_block", 1024},
                 {"max_shared_memory_per_block", 65536},
                 {"max_shared_memory_per_multiprocessor", 65536},
                 {"sm_count", mi300 ? 304 : cdna ? 110 : 80},
                 {"l2_bytes", mi300 ? 4194304 : cdna ? 8388608 : 4194304},
                 {"warp_size", cdna ? 64 : 32},
                 {"max_cluster_size", 1},
                 {"has_wgmma", 0},
                 {"sm_version", 0},
                 {"memory_bytes", std::int64_t{64} << 30}};
  info.properties = {{"compile_arch", arch}, {"nominal", true}};
  info.fingerprint = "hip|nominal|" + arch;
  return info;
}

DeviceInfo describe_hip_device(int index) {
  const HipLibrary& hip = HipLibrary::device_runtime();  // BackendUnavailable, saying what is missing
  int count = 0;
  const hipError_t counted = hip.hipGetDeviceCount(&count);
  if (counted != hipSuccess || count == 0)
    throw BackendUnavailable("no HIP device was found: the HIP runtime reports " +
                             (counted == hipSuccess ? std::string("no AMD GPU")
                                                     : hip.error_text(counted) +
                                                           " (no AMD GPU, or the amdgpu kernel driver is not loaded)"));
  if (index < 0 || index >= count)
    throw BackendUnavailable("no HIP device " + std::to_string(index) + ": this machine has " +
                             std::to_string(count));
  KT_HIP_RUNTIME(hipSetDevice(index));
  hipDeviceProp_t properties{};
  KT_HIP_RUNTIME(hipGetDeviceProperties(&properties, index));
  char bus[64] = {};
  KT_HIP_RUNTIME(hipDeviceGetPCIBusId(bus, sizeof bus, index));
  int driver_version = 0, runtime_version = 0;
  KT_HIP_RUNTIME(hipDriverGetVersion(&driver_version));
  KT_HIP_RUNTIME(hipRuntimeGetVersion(&runtime_version));
  const std::string arch = hip_target_of(properties.gcnArchName);

  DeviceInfo info;
  info.backend = "hip";
  info.name = properties.name;
  info.vendor = "amd";
  info.architecture = arch;
  info.limits = {{"max_threads_per_block", properties.maxThreadsPerBlock},
                 {"max_shared_memory_per_block", static_cast<std::int64_t>(properties.sharedMemPerBlock)},
                 {"max_shared_memory_per_multiprocessor",
                  static_cast<std::int64_t>(properties.maxSharedMemoryPerMultiProcessor)},
                 {"sm_count", properties.multiProcessorCount},
                 {"l2_bytes", properties.l2CacheSize},
                 {"warp_size", properties.warpSize},
                 {"max_cluster_size", 1},
                 {"has_wgmma", 0},
                 {"sm_version", 0},
                 {"memory_bytes", static_cast<std::int64_t>(properties.totalGlobalMem)}};
  info.properties = {{"gcn_arch_name", properties.gcnArchName},
                     {"compile_arch", arch},
                     {"pci_bus_id", bus},
                     {"device_count", count},
                     {"driver_version", driver_version},
                     {"runtime_version", runtime_version},
                     {"memory_clock_khz", properties.memoryClockRate},
                     {"memory_bus_width", properties.memoryBusWidth}};
  info.fingerprint = "hip|" + info.name + "|" + std::string(properties.gcnArchName) +
                     "|cus=" + std::to_string(properties.multiProcessorCount) +
                     "|mem=" + std::to_string(properties.totalGlobalMem >> 20) +
                     "MiB|driver=" + std::to_string(driver_version);
  return info;
}

}  // namespace ktune
