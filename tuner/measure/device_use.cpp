#include "tuner/measure/device_use.hpp"

namespace ktune {

nlohmann::json DeviceUse::to_json() const {
  return {{"kernel_share", kernel_share},
          {"between_share", between_share},
          {"busy_share", busy_share()},
          {"configs_per_minute", configs_per_minute}};
}

void DeviceUseTally::add(const std::string& config_key, const std::string& device, const DeviceTime& time) {
  kernel_ns_ += time.kernel_ns;
  between_ns_ += time.between_ns;
  configs_.insert(config_key);
  devices_.insert(device);
}

DeviceUse DeviceUseTally::over(double wall_seconds) const {
  DeviceUse use;
  if (wall_seconds <= 0 || configs_.empty()) return use;
  const double device_ns = wall_seconds * 1e9 * static_cast<double>(devices_.size());
  use.kernel_share = kernel_ns_ / device_ns;
  use.between_share = between_ns_ / device_ns;
  use.configs_per_minute = static_cast<double>(configs_.size()) / (wall_seconds / 60);
  return use;
}

}  // namespace ktune
