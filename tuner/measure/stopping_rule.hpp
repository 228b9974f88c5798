// When to stop taking timing samples, after nvbench's stdrel criterion: at least `min_samples`
// and `min_time_s`, then stop as soon as the relative standard deviation is under `max_noise`,
// or when the noise estimate has stopped changing (more samples would not make it smaller), or
// at `max_time_s` / `max_samples`, or when the variant is clearly slower than the best one so far
// (racing: race_ns). The reason is recorded with the result.
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
  // Racing: once it has min_samples, a variant whose median is above race_factor times race_ns
  // (the best median of the tune so far) stops, since it cannot be the winner. 0 turns it off
  // (the default; the tune session sets it per config).
  double race_ns = 0;
  double race_factor = 1.25;

  nlohmann::json to_json() const;
  static StoppingCriteria from_json(const nlohmann::json& json);
};

// Whether a result's message says racing stopped its sampling early: such a config is slower than
// the best by design, and its few samples are not a measurement of its noise.
bool stopped_by_racing(const std::string& message);

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
  std::vector<double> samples_;  // for the racing median
  std::size_t count_ = 0;
  double total_ns_ = 0;
  double mean_ = 0;  // Welford running mean and squared deviations
  double m2_ = 0;
  std::string reason_;
};

}  // namespace ktune
