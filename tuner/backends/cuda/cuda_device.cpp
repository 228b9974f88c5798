#include "tuner/backends/cuda/cuda_device.hpp"

#include <cctype>

#include "tuner/backends/cuda/cuda_driver.hpp"

namespace ktune {
namespace {

int cuda_attribute(CUdevice device, CUdevice_attribute which) {
  int value = 0;
  KT_CU(cuDeviceGetAttribute(&value, which, device));
  return value;
}

// 90 for "sm_90a", 80 for "sm_80": the number the spaces compare against (e.g. mma.sync needs 80).
std::int64_t sm_version(const std::string& arch) {
  std::int64_t version = 0;
  // The digits after the prefix: "sm_90a" and "compute_80" (PTX for any newer GPU) alike.
  const std::size_t digits = arch.find('_') + 1;
  for (std::size_t i = digits; i < arch.size() && std::isdigit(static_cast<unsigned char>(arch[i])); ++i)
    version = version * 10 + (arch[i] - '0');
  return version;
}

}  // namespace

bool compile_arch_has_wgmma(const std::string& arch) { return arch == "sm_90a"; }

std::string compile_arch(int major, int minor) {
  const std::string base = "sm_" + std::to_string(major) + std::to_string(minor);
  return (major == 9 || major == 10) && minor == 0 ? base + "a" : base;
}

DeviceInfo nominal_cuda_device(const std::string& arch) {
  DeviceInfo info;
  info.backend = "cuda";
  info.vendor = "nvidia";
  info.architecture = arch;
  info.name = "nominal " + arch + " GPU (compile-only)";
  // Hopper (H100/H200) limits for sm_90*, Ampere A100 otherwise: the spaces' constraints read
  // these names; real tunes read the device's own values.
  const bool hopper = arch.rfind("sm_90", 0) == 0 || arch.rfind("sm_10", 0) == 0;
  info.limits = {{"max_threads_per_block", 1024},
                 {"max_shared_memory_per_block", hopper ? 232448 : 166912},
                 {"max_shared_memory_per_multiprocessor", hopper ? 233472 : 167936},
                 {"sm_count", hopper ? 132 : 108},
                 {"l2_bytes", hopper ? 52428800 : 41943040},
                 {"warp_size", 32},
                 {"max_cluster_size", hopper ? 8 : 1},
                 {"has_wgmma", compile_arch_has_wgmma(arch) ? 1 : 0},
                 {"sm_version", sm_version(arch)},
                 {"memory_bytes", std::int64_t{80} << 30}};
  info.properties = {{"compile_arch", arch}, {"nominal", true}};
  info.fingerprint = "cuda|nominal|" + arch;
  return info;
}

DeviceInfo describe_cuda_device(CUdevice device) {
  char name[256] = {};
  KT_CU(cuDeviceGetName(name, sizeof name, device));
  char bus[64] = {};
  KT_CU(cuDeviceGetPCIBusId(bus, sizeof bus, device));
  int count = 0;
  KT_CU(cuDeviceGetCount(&count));
  std::size_t memory = 0;
  KT_CU(cuDeviceTotalMem(&memory, device));
  int driver_version = 0;
  KT_CU(cuDriverGetVersion(&driver_version));
  const int major = cuda_attribute(device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  const int minor = cuda_attribute(device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  const int sms = cuda_attribute(device, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  const int l2 = cuda_attribute(device, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
  DeviceInfo info;
  info.backend = "cuda";
  info.name = name;
  info.vendor = "nvidia";
  info.architecture = "sm_" + std::to_string(major) + std::to_string(minor);
  info.limits = {{"max_threads_per_block", cuda_attribute(device, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)},
                 {"max_shared_memory_per_block",
                  cuda_attribute(device, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)},
                 // What blocks resident together share (spaces that run several blocks per SM).
                 {"max_shared_memory_per_multiprocessor",
                  cuda_attribute(device, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR)},
                 {"sm_count", sms},
                 {"l2_bytes", l2},
                 {"warp_size", cuda_attribute(device, CU_DEVICE_ATTRIBUTE_WARP_SIZE)},
                 // 8 is the portable cluster size limit on every GPU that launches clusters.
                 {"max_cluster_size", cuda_attribute(device, CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH) ? 8 : 1},
                 {"has_wgmma", compile_arch_has_wgmma(compile_arch(major, minor)) ? 1 : 0},
                 {"sm_version", major * 10 + minor},
                 {"memory_bytes", static_cast<std::int64_t>(memory)}};
  info.properties = {{"compute_capability", std::to_string(major) + "." + std::to_string(minor)},
                     {"compile_arch", compile_arch(major, minor)},
                     {"pci_bus_id", std::string(bus)},
                     {"device_count", count},
                     {"driver_version", driver_version},
                     {"memory_clock_khz", cuda_attribute(device, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE)},
                     {"memory_bus_width", cuda_attribute(device, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH)}};
  info.fingerprint = "cuda|" + info.name + "|" + info.architecture + "|sms=" + std::to_string(sms) +
                     "|mem=" + std::to_string(memory >> 20) + "MiB|driver=" + std::to_string(driver_version);
  return info;
}

}  // namespace ktune
