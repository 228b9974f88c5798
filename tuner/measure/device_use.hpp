// How busy a tune kept its devices: the share of the tune's wall time the devices spent running
// the variants (kernel_share) and between their timed samples, evicting caches and restoring
// read-write tensors (between_share), and how many distinct configs were measured per minute.
// Only evaluations measured in the tune count; results reused from the database took no device
// time in it.
//
//   DeviceUseTally tally;
//   tally.add(done.job.config.key(), done.device, done.result.device_time);   // per measurement
//   const DeviceUse use = tally.over(summary.seconds);
//   // use.busy_share() == use.kernel_share + use.between_share
#pragma once

#include <cstddef>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "tuner/measure/evaluation.hpp"

namespace ktune {

struct DeviceUse {
  double kernel_share = 0;        // of the wall time, per device
  double between_share = 0;       // of the wall time, per device
  double configs_per_minute = 0;  // distinct configs measured, all devices together

  double busy_share() const { return kernel_share + between_share; }
  // {"kernel_share", "between_share", "busy_share", "configs_per_minute"}
  nlohmann::json to_json() const;
};

class DeviceUseTally {
 public:
  // One evaluation measured in the tune: its config, the device that measured it (a label such
  // as "cuda:1" or "rank 2 cuda:0"; any text that tells devices apart) and its device time.
  void add(const std::string& config_key, const std::string& device, const DeviceTime& time);

  // The use over `wall_seconds` of the tune. With several devices the device time is divided by
  // the number of devices that measured, so each share is that of one device's time (0..1)
  // rather than a sum over devices; configs_per_minute counts every device's configs. All zero
  // when nothing was measured or no time passed.
  DeviceUse over(double wall_seconds) const;

  std::size_t configs() const { return configs_.size(); }
  std::size_t devices() const { return devices_.size(); }

 private:
  double kernel_ns_ = 0;
  double between_ns_ = 0;
  std::set<std::string> configs_;
  std::set<std::string> devices_;
};

}  // namespace ktune
