#include "tuner/backends/cuda/nvml_monitor.hpp"

#include <dlfcn.h>

namespace ktune {

// The few NVML entry points used, declared here so no NVML headers are needed to build.
struct NvmlMonitor::Api {
  using Init = int (*)();
  using HandleByPci = int (*)(const char*, void**);
  using ClockInfo = int (*)(void*, int, unsigned*);
  using Temperature = int (*)(void*, int, unsigned*);
  using Power = int (*)(void*, unsigned*);
  Init init = nullptr;
  HandleByPci handle_by_pci = nullptr;
  ClockInfo clock = nullptr;
  ClockInfo max_clock = nullptr;
  Temperature temperature = nullptr;
  Power power = nullptr;
};

namespace {

constexpr int kNvmlClockSm = 1;        // NVML_CLOCK_SM
constexpr int kNvmlTemperatureGpu = 0;  // NVML_TEMPERATURE_GPU

const NvmlMonitor::Api* load_nvml();

}  // namespace

NvmlMonitor::NvmlMonitor(const std::string& pci_bus_id) {
  api_ = load_nvml();
  if (api_ && api_->handle_by_pci(pci_bus_id.c_str(), &device_) != 0) device_ = nullptr;
}

nlohmann::json NvmlMonitor::read() const {
  nlohmann::json reading = {{"sm_clock_mhz", nullptr}, {"max_sm_clock_mhz", nullptr}, {"temperature_c", nullptr},
                            {"power_w", nullptr}};
  if (!device_) return reading;
  unsigned value = 0;
  if (api_->clock(device_, kNvmlClockSm, &value) == 0) reading["sm_clock_mhz"] = value;
  if (api_->max_clock(device_, kNvmlClockSm, &value) == 0) reading["max_sm_clock_mhz"] = value;
  if (api_->temperature(device_, kNvmlTemperatureGpu, &value) == 0) reading["temperature_c"] = value;
  if (api_->power(device_, &value) == 0) reading["power_w"] = value / 1000.0;
  return reading;
}

namespace {

const NvmlMonitor::Api* load_nvml() {
  static const NvmlMonitor::Api* api = []() -> const NvmlMonitor::Api* {
    void* library = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!library) return nullptr;
    static NvmlMonitor::Api loaded;
    loaded.init = reinterpret_cast<NvmlMonitor::Api::Init>(dlsym(library, "nvmlInit_v2"));
    loaded.handle_by_pci =
        reinterpret_cast<NvmlMonitor::Api::HandleByPci>(dlsym(library, "nvmlDeviceGetHandleByPciBusId_v2"));
    loaded.clock = reinterpret_cast<NvmlMonitor::Api::ClockInfo>(dlsym(library, "nvmlDeviceGetClockInfo"));
    loaded.max_clock = reinterpret_cast<NvmlMonitor::Api::ClockInfo>(dlsym(library, "nvmlDeviceGetMaxClockInfo"));
    loaded.temperature = reinterpret_cast<NvmlMonitor::Api::Temperature>(dlsym(library, "nvmlDeviceGetTemperature"));
    loaded.power = reinterpret_cast<NvmlMonitor::Api::Power>(dlsym(library, "nvmlDeviceGetPowerUsage"));
    if (!loaded.init || !loaded.handle_by_pci || !loaded.clock || !loaded.max_clock || !loaded.temperature ||
        !loaded.power || loaded.init() != 0)
      return nullptr;
    return &loaded;
  }();
  return api;
}

}  // namespace
}  // namespace ktune
