// The live progress line of `ktune tune` on a terminal: done/total, best so far, rate and ETA,
// redrawn in place on stderr. Silent when stderr is not a terminal or output is JSON.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "tuner/tune/tune_session.hpp"

namespace ktune::cli {

// Seconds left: the configs still to visit at the rate so far, but no more than the time limit
// leaves (the limit counts evaluation time, which the elapsed time bounds from above).
double eta_seconds(std::size_t done, std::size_t planned, double elapsed_s, std::optional<double> time_limit_s);

class ProgressLine final : public TuneObserver {
 public:
  // `time_limit_s`: the tune's --time-limit (or its default), which bounds the ETA.
  ProgressLine(bool enabled, std::optional<double> time_limit_s);
  void started(const TuneSummary& summary, std::size_t planned) override;
  void visited(const TuneSummary& summary, std::size_t planned) override;
  void finished(const TuneSummary& summary) override;

 private:
  void draw(const std::string& text);
  bool enabled_;
  std::optional<double> time_limit_s_;
  std::chrono::steady_clock::time_point last_draw_{};
  std::size_t width_ = 0;
};

}  // namespace ktune::cli
