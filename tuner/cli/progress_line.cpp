#include "tuner/cli/progress_line.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "tuner/cli/cli_common.hpp"

namespace ktune::cli {

ProgressLine::ProgressLine(bool enabled, std::optional<double> time_limit_s)
    : enabled_(enabled && isatty(STDERR_FILENO)), time_limit_s_(time_limit_s) {}

double eta_seconds(std::size_t done, std::size_t planned, double elapsed_s, std::optional<double> time_limit_s) {
  const double rate = elapsed_s > 0 ? static_cast<double>(done) / elapsed_s : 0;
  double eta = rate > 0 ? static_cast<double>(planned - std::min(done, planned)) / rate : 0.0;
  if (time_limit_s) eta = std::min(eta, std::max(0.0, *time_limit_s - elapsed_s));
  return eta;
}

void ProgressLine::draw(const std::string& text) {
  std::string line = text;
  if (line.size() < width_) line.append(width_ - line.size(), ' ');
  width_ = text.size();
  std::fprintf(stderr, "\r%s", line.c_str());
  std::fflush(stderr);
}

void ProgressLine::started(const TuneSummary& summary, std::size_t planned) {
  // Said before minutes of measuring, not only in the summary after them (and with --json too).
  for (const std::string& warning : summary.warnings) std::fprintf(stderr, "ktune: warning: %s\n", warning.c_str());
  if (!enabled_) return;
  draw(summary.family + " on " + summary.backend + ": 0/" + std::to_string(planned) + " configs");
}

void ProgressLine::visited(const TuneSummary& summary, std::size_t planned) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_draw_ < std::chrono::milliseconds(100)) return;  // redraw at most 10 times a second
  last_draw_ = now;
  const std::size_t done = summary.evaluated + summary.reused;
  const double rate = summary.seconds > 0 ? static_cast<double>(done) / summary.seconds : 0;
  char text[256];
  std::snprintf(text, sizeof text, "%s on %s: %zu/%zu configs (%zu reused)  %.1f/s  ETA %.0f s  best %s",
                summary.family.c_str(), summary.backend.c_str(), done, planned, summary.reused, rate,
                eta_seconds(done, planned, summary.seconds, time_limit_s_),
                summary.best ? format_duration_ns(summary.best->stats.median_ns).c_str() : "-");
  std::string line = text;
  // A time the device's memory could not have delivered is a bug until explained: said at once.
  if (summary.implausible > 0) line += "  IMPLAUSIBLE " + std::to_string(summary.implausible);
  if (summary.noisy > 0) line += "  NOISY " + std::to_string(summary.noisy);
  draw(line);
}

void ProgressLine::finished(const TuneSummary&) {
  if (!enabled_) return;
  draw("");
  std::fprintf(stderr, "\r");
  std::fflush(stderr);
}

}  // namespace ktune::cli
