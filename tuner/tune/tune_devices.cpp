#include "tuner/tune/tune_devices.hpp"

#include <algorithm>
#include <charconv>

#include "tuner/core/errors.hpp"

namespace ktune {

EvaluationPool& TuneDevices::open(double timeout_s) {
  if (!pool_) {
    local_ = std::make_unique<LocalDevices>(backend_, device_indices_);
    std::vector<DeviceInfo> infos = local_->open(timeout_s);
    pool_ = std::make_unique<EvaluationPool>(*local_, std::move(infos), remote_);
  }
  return *pool_;
}

std::vector<int> parse_device_list(const std::string& text, const std::string& backend, int available) {
  if (available <= 0)
    throw BackendUnavailable("--devices " + text + ": the " + backend + " backend finds no device on this host");
  std::vector<int> devices;
  if (text == "all") {
    for (int i = 0; i < available; ++i) devices.push_back(i);
    return devices;
  }
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, comma - start);
    int index = -1;
    const auto [end, error] = std::from_chars(item.data(), item.data() + item.size(), index);
    if (item.empty() || error != std::errc() || end != item.data() + item.size() || index < 0)
      throw InputError("--devices " + text + ": '" + item + "' is not a device index; give all, or indices such as 0,2");
    if (index >= available)
      throw BackendUnavailable("--devices " + text + ": the " + backend + " backend has no device " + item +
                               " on this host (it finds " + std::to_string(available) + ", numbered from 0)");
    if (std::find(devices.begin(), devices.end(), index) != devices.end())
      throw InputError("--devices " + text + ": device " + item + " is listed twice");
    devices.push_back(index);
    start = comma + 1;
  }
  return devices;
}

}  // namespace ktune
