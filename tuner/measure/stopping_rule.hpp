// When to stop taking timing samples, after nvbench's stdrel criterion: at least `min_samples`
// and `min_time_s`, then stop as soon as the relative standard deviation is under `max_noise`,
// or when the noise estimate has stopped changing (more samples would not make it smaller), or
// at `max_time_s` / `max_samples`. The reason is recorded with the result.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ktune {

struct StoppingCriteria {
  std::size_t min_samples = 10;
  std::size_t max_samples = 10000;
  double max_noise = 0.005;       // relative standard deviation
  double min_time_s = 0.02;       // of accumulated sample time
  double max_time_s = 1.0;        // of accumulated sample time
  std::size_t noise_window = 10;  // samples over which a stable noise estimate counts as converged
  double noise_stability = 0.05;  // relative spread of the noise estimate within the window

  nlohmann::json to_json() const;
  static StoppingCriteria from_json(const nlohmann::json& json);
};

class StoppingRule {
 public:
  explicit StoppingRule(StoppingCriteria criteria) : criteria_(criteria) {}
  void add(double sample_ns);
  bool done() const { return !reason_.empty(); }
  // Why sampling stopped, e.g. "noise 0.31% <= 0.50% after 12 samples".
  const std::string& reason() const { return reason_; }

 private:
  void decide();

  StoppingCriteria criteria_;
  std::vector<double> noise_history_;
  std::size_t count_ = 0;
  double total_ns_ = 0;
  double mean_ = 0;  // Welford running mean and squared deviations
  double m2_ = 0;
  std::string reason_;
};

}  // namespace ktune
