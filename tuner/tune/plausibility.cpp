#include "tuner/tune/plausibility.hpp"

#include <cstdio>

namespace ktune {

std::string implausibility(const EvaluationResult& result, double bytes, const DeviceInfo& device) {
  if (result.outcome != Outcome::ok || bytes <= 0 || !result.environment.value("l2_flushed", false)) return {};
  const auto peak = peak_memory_bandwidth(device);
  if (!peak || *peak <= 0) return {};
  const double fastest_ns = bytes / *peak * 1e9;
  if (result.stats.median_ns >= fastest_ns) return {};
  char text[256];
  std::snprintf(text, sizeof text,
                "timed %.4g us, but moving its %.4g MB at the peak %.4g GB/s takes at least %.4g us: the kernel "
                "does less work than its arguments imply, or the timing is wrong",
                result.stats.median_ns * 1e-3, bytes * 1e-6, *peak * 1e-9, fastest_ns * 1e-3);
  return text;
}

}  // namespace ktune
