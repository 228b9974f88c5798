// How long a device may take to open.
#pragma once

namespace ktune {

// Seconds allowed for opening a device (driver start-up included), apart from per-config limits.
inline constexpr double kHelloTimeoutSeconds = 120.0;

}  // namespace ktune
