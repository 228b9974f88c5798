// Summary statistics of timing samples. Ranking uses the median; every sample is kept.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include <nlohmann/json.hpp>

namespace ktune {

struct SampleStatistics {
  std::size_t count = 0;
  double median_ns = 0;
  double min_ns = 0;
  double max_ns = 0;
  double mean_ns = 0;
  double stddev_ns = 0;   // sample standard deviation (n - 1)
  double rel_stddev = 0;  // stddev / mean

  nlohmann::json to_json() const;
};

SampleStatistics summarize(std::span<const double> samples_ns);
// The median of `values` (NaN when empty): the middle one, or the mean of the middle two.
double median(std::vector<double> values);

}  // namespace ktune
