// SM clock, temperature and power of one GPU through NVML, loaded at run time from
// libnvidia-ml.so.1. When NVML is absent every reading is unknown (null in JSON), never an error.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace ktune {

class NvmlMonitor {
 public:
  explicit NvmlMonitor(const std::string& pci_bus_id);
  bool available() const { return device_ != nullptr; }
  // {"sm_clock_mhz", "max_sm_clock_mhz", "temperature_c", "power_w"}; null where unknown.
  nlohmann::json read() const;

  struct Api;  // the NVML entry points, defined in the .cpp

 private:
  const Api* api_ = nullptr;
  void* device_ = nullptr;
};

}  // namespace ktune
