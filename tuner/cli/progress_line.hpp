// The live progress line of `ktune tune` on a terminal: done/total, best so far, rate and ETA,
// redrawn in place on stderr. Silent when stderr is not a terminal or output is JSON.
#pragma once

#include <chrono>
#include <string>

#include "tuner/tune/tune_session.hpp"

namespace ktune::cli {

class ProgressLine final : public TuneObserver {
 public:
  explicit ProgressLine(bool enabled);
  void started(const TuneSummary& summary, std::size_t planned) override;
  void visited(const TuneSummary& summary, std::size_t planned) override;
  void finished(const TuneSummary& summary) override;

 private:
  void draw(const std::string& text);
  bool enabled_;
  std::chrono::steady_clock::time_point last_draw_{};
  std::size_t width_ = 0;
};

}  // namespace ktune::cli
