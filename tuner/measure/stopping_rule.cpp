#include "tuner/measure/stopping_rule.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace ktune {
namespace {

std::string percent(double fraction) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f%%", fraction * 100.0);
  return text;
}

constexpr const char* kRacedReason = "raced: median ";

}  // namespace

bool stopped_by_racing(const std::string& message) { return message.find(kRacedReason) != std::string::npos; }

nlohmann::json StoppingCriteria::to_json() const {
  return {{"min_samples", min_samples}, {"max_samples", max_samples},   {"max_noise", max_noise},
          {"min_time_s", min_time_s},   {"max_time_s", max_time_s},     {"noise_window", noise_window},
          {"noise_stability", noise_stability}, {"race_ns", race_ns},           {"race_factor", race_factor}};
}

StoppingCriteria StoppingCriteria::from_json(const nlohmann::json& json) {
  StoppingCriteria c;
  c.min_samples = json.value("min_samples", c.min_samples);
  c.max_samples = json.value("max_samples", c.max_samples);
  c.max_noise = json.value("max_noise", c.max_noise);
  c.min_time_s = json.value("min_time_s", c.min_time_s);
  c.max_time_s = json.value("max_time_s", c.max_time_s);
  c.noise_window = json.value("noise_window", c.noise_window);
  c.noise_stability = json.value("noise_stability", c.noise_stability);
  c.race_ns = json.value("race_ns", c.race_ns);
  c.race_factor = json.value("race_factor", c.race_factor);
  return c;
}

void StoppingRule::add(double sample_ns) {
  ++count_;
  total_ns_ += sample_ns;
  const double delta = sample_ns - mean_;
  mean_ += delta / static_cast<double>(count_);
  m2_ += delta * (sample_ns - mean_);
  const double noise = count_ > 1 && mean_ > 0 ? std::sqrt(m2_ / static_cast<double>(count_ - 1)) / mean_ : 0.0;
  noise_history_.push_back(noise);
  if (criteria_.race_ns > 0) samples_.push_back(sample_ns);
  decide();
}

void StoppingRule::decide() {
  const double seconds = total_ns_ * 1e-9;
  const double noise = noise_history_.back();
  const std::string at = " after " + std::to_string(count_) + " samples";
  if (count_ >= criteria_.max_samples) {
    reason_ = "sample cap reached at noise " + percent(noise) + at;
    return;
  }
  if (seconds >= criteria_.max_time_s) {
    reason_ = "time cap reached at noise " + percent(noise) + at;
    return;
  }
  if (count_ < criteria_.min_samples) return;
  // A config clearly slower than the best needs no more than its minimum samples to show it.
  // Judged at the minimum and again each time the sample count doubles: a median per sample
  // would make a long measurement quadratic.
  const bool race_now = criteria_.race_ns > 0 && count_ >= criteria_.min_samples && (count_ & (count_ - 1)) == 0;
  if (race_now || (criteria_.race_ns > 0 && count_ == criteria_.min_samples)) {
    std::vector<double> sorted = samples_;
    std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(sorted.size() / 2), sorted.end());
    const double median = sorted[sorted.size() / 2];
    if (median > criteria_.race_factor * criteria_.race_ns) {
      char ratio[32];
      std::snprintf(ratio, sizeof ratio, "%.2f", median / criteria_.race_ns);
      reason_ = std::string(kRacedReason) + std::string(ratio) + "x the best so far" + at;
      return;
    }
  }
  if (seconds < criteria_.min_time_s) return;
  if (noise <= criteria_.max_noise) {
    reason_ = "noise " + percent(noise) + " <= " + percent(criteria_.max_noise) + at;
    return;
  }
  if (noise_history_.size() >= criteria_.noise_window) {
    const auto window_begin = noise_history_.end() - static_cast<std::ptrdiff_t>(criteria_.noise_window);
    const auto [low, high] = std::minmax_element(window_begin, noise_history_.end());
    if (noise > 0 && (*high - *low) / noise <= criteria_.noise_stability)
      reason_ = "noise converged at " + percent(noise) + at;
  }
}

}  // namespace ktune
