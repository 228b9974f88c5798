// What a backend reports about one device. The fingerprint identifies the hardware (and driver)
// so measurements are reused only on the same kind of device.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace ktune {

struct DeviceInfo {
  std::string backend;       // "cpu", "cuda", ...
  std::string name;          // "Intel(R) Xeon(R) Processor", "NVIDIA H200"
  std::string vendor;        // normalised lower case: "intel", "amd", "nvidia"
  std::string architecture;  // "x86_64-avx512", "sm_90", "gfx90a"
  std::string fingerprint;   // stable identity string, the database key
  // Names usable in constraint expressions, e.g. hardware_threads, max_threads_per_block.
  std::map<std::string, std::int64_t> limits;
  nlohmann::json properties = nlohmann::json::object();  // everything else worth recording

  nlohmann::json to_json() const;
  static DeviceInfo from_json(const nlohmann::json& json);
};

// The device's theoretical memory bandwidth in bytes/s, from its memory clock and bus width
// (double data rate), when the backend reports them (CUDA: 4.8e12 on an H200).
std::optional<double> peak_memory_bandwidth(const DeviceInfo& device);

}  // namespace ktune
