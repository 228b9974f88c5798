// Describes the host CPU: model, vendor, instruction set, threads and caches.
#pragma once

#include "tuner/core/device.hpp"

namespace ktune {

DeviceInfo describe_host_cpu();

}  // namespace ktune
