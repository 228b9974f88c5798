#include "tuner/core/device.hpp"

namespace ktune {

nlohmann::json DeviceInfo::to_json() const {
  return {{"backend", backend},           {"name", name},       {"vendor", vendor},
          {"architecture", architecture}, {"fingerprint", fingerprint},
          {"limits", limits},             {"properties", properties}};
}

}  // namespace ktune
