#include "tuner/measure/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

namespace ktune {

SampleStatistics summarize(std::span<const double> samples_ns) {
  SampleStatistics stats;
  stats.count = samples_ns.size();
  if (samples_ns.empty()) return stats;
  std::vector<double> sorted(samples_ns.begin(), samples_ns.end());
  std::sort(sorted.begin(), sorted.end());
  const std::size_t n = sorted.size();
  stats.min_ns = sorted.front();
  stats.max_ns = sorted.back();
  stats.median_ns = n % 2 == 1 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
  stats.mean_ns = std::accumulate(sorted.begin(), sorted.end(), 0.0) / static_cast<double>(n);
  if (n > 1) {
    double sum_sq = 0;
    for (double x : sorted) sum_sq += (x - stats.mean_ns) * (x - stats.mean_ns);
    stats.stddev_ns = std::sqrt(sum_sq / static_cast<double>(n - 1));
  }
  stats.rel_stddev = stats.mean_ns > 0 ? stats.stddev_ns / stats.mean_ns : 0;
  return stats;
}

nlohmann::json SampleStatistics::to_json() const {
  return {{"count", count},   {"median_ns", median_ns}, {"min_ns", min_ns},
          {"max_ns", max_ns}, {"mean_ns", mean_ns},     {"stddev_ns", stddev_ns},
          {"rel_stddev", rel_stddev}};
}

double median(std::vector<double> values) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

}  // namespace ktune
