#include "tuner/core/machine_load.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <thread>

namespace ktune {

std::optional<double> one_minute_load() {
  if (const char* given = std::getenv("KTUNE_LOAD_AVERAGE"); given && *given) {
    char* end = nullptr;
    const double value = std::strtod(given, &end);
    if (end != given && *end == '\0' && value >= 0) return value;
  }
  double load[1] = {0};
  if (getloadavg(load, 1) != 1) return std::nullopt;
  return load[0];
}

std::string machine_load_warning() {
  const std::optional<double> load = one_minute_load();
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  // More runnable tasks than hardware threads: some wait for a core, this tune's included.
  if (!load || *load <= threads) return "";
  char text[256];
  std::snprintf(text, sizeof text,
                "the machine is loaded (load average %.2f over the last minute on %u hardware threads): "
                "timings will be noisier and slower than on an idle machine",
                *load, threads);
  return text;
}

}  // namespace ktune
