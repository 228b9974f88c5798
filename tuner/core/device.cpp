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

}  // namespace ktune
