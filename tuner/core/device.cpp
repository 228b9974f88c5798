#include "tuner/core/device.hpp"

namespace ktune {

nlohmann::json DeviceInfo::to_json() const {
  return {{"backend", backend},           {"name", name},       {"vendor", vendor},
          {"architecture", architecture}, {"fingerprint", fingerprint},
          {"limits", limits},             {"properties", properties}};
}

DeviceInfo DeviceInfo::from_json(const nlohmann::json& json) {
  DeviceInfo info;
  info.backend = json.at("backend");
  info.name = json.at("name");
  info.vendor = json.at("vendor");
  info.architecture = json.at("architecture");
  info.fingerprint = json.at("fingerprint");
  info.limits = json.at("limits").get<std::map<std::string, std::int64_t>>();
  info.properties = json.at("properties");
  return info;
}

std::optional<double> peak_memory_bandwidth(const DeviceInfo& device) {
  const auto& p = device.properties;
  if (!p.contains("memory_clock_khz") || !p.contains("memory_bus_width") || !p["memory_clock_khz"].is_number() ||
      !p["memory_bus_width"].is_number())
    return std::nullopt;
  const double peak = 2.0 * p["memory_clock_khz"].get<double>() * 1e3 * p["memory_bus_width"].get<double>() / 8.0;
  return peak > 0 ? std::optional<double>(peak) : std::nullopt;
}

}  // namespace ktune
