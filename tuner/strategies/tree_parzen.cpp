#include "tuner/strategies/tree_parzen.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ktune {
namespace {

// Random configs before the model takes over: enough for a first split into good and bad.
constexpr std::size_t kStartup = 10;
// The fastest 20% of observations (at least 2) model "good".
constexpr double kGoodFraction = 0.2;
constexpr std::size_t kMinimumGood = 2;
// Kernel width in value-index steps: one step away still counts for ~60%, three for ~1%.
constexpr double kBandwidth = 1.0;
// Weight of the uniform prior, in observations: keeps unseen values reachable.
constexpr double kPriorWeight = 1.0;
// On bigger spaces the ratio is computed for this many random unvisited candidates per proposal.
constexpr std::size_t kMaxCandidates = 4096;

}  // namespace

TreeParzen::TreeParzen(const ValidConfigs& valid, std::uint64_t seed)
    : space_(valid), unvisited_(valid.size()), rng_(seed) {}

TreeParzen::LogDensity TreeParzen::log_density(const std::vector<Observation>& sample) const {
  LogDensity density(space_.parameter_count());
  for (std::size_t p = 0; p < space_.parameter_count(); ++p) {
    const std::uint32_t values = space_.value_count(p);
    std::vector<double> weight(values, kPriorWeight / values);
    for (const Observation& observation : sample) {
      const double centre = space_.coordinate(observation.index, p);
      // A kernel normalised over the value list, so each observation adds weight 1.
      std::vector<double> kernel(values);
      double total = 0;
      for (std::uint32_t v = 0; v < values; ++v) {
        const double d = (v - centre) / kBandwidth;
        kernel[v] = std::exp(-0.5 * d * d);
        total += kernel[v];
      }
      for (std::uint32_t v = 0; v < values; ++v) weight[v] += kernel[v] / total;
    }
    const double sum = kPriorWeight + static_cast<double>(sample.size());
    density[p].resize(values);
    for (std::uint32_t v = 0; v < values; ++v) density[p][v] = std::log(weight[v] / sum);
  }
  return density;
}

double TreeParzen::log_ratio(std::size_t index, const LogDensity& good, const LogDensity& bad) const {
  double ratio = 0;
  for (std::size_t p = 0; p < space_.parameter_count(); ++p) {
    const std::uint32_t v = space_.coordinate(index, p);
    ratio += good[p][v] - bad[p][v];
  }
  return ratio;
}

std::optional<std::size_t> TreeParzen::propose() {
  if (unvisited_.empty()) return std::nullopt;
  if (observed_.size() < kStartup || random_proposals_ < kStartup) {
    ++random_proposals_;
    return unvisited_.take_random(rng_);
  }
  std::vector<Observation> sorted = observed_;
  std::sort(sorted.begin(), sorted.end(),
            [](const Observation& a, const Observation& b) { return a.time_ns < b.time_ns; });
  const std::size_t good_count = std::max(
      kMinimumGood, static_cast<std::size_t>(std::ceil(kGoodFraction * static_cast<double>(sorted.size()))));
  const auto split = sorted.begin() + static_cast<std::ptrdiff_t>(std::min(good_count, sorted.size() - 1));
  const LogDensity good = log_density({sorted.begin(), split});
  const LogDensity bad = log_density({split, sorted.end()});

  // Every unvisited config when few are left, else a random sample of them (drawn without
  // removing them from the unvisited set; duplicates in the sample are harmless).
  std::optional<std::size_t> best;
  double best_ratio = -std::numeric_limits<double>::infinity();
  auto consider = [&](std::size_t index) {
    const double ratio = log_ratio(index, good, bad);
    if (ratio > best_ratio) {
      best_ratio = ratio;
      best = index;
    }
  };
  if (unvisited_.count() <= kMaxCandidates) {
    for (std::size_t i = 0; i < space_.size(); ++i)
      if (unvisited_.contains(i)) consider(i);
  } else {
    for (std::size_t k = 0; k < kMaxCandidates; ++k) {
      std::size_t index;
      do index = rng_.below(space_.size());
      while (!unvisited_.contains(index));
      consider(index);
    }
  }
  unvisited_.remove(*best);
  return best;
}

void TreeParzen::learn(std::size_t index, const EvaluationResult& result) {
  if (index >= space_.size()) return;
  unvisited_.remove(index);  // the tune loop may evaluate configs it did not get from here
  const bool ok = result.outcome == Outcome::ok && std::isfinite(result.stats.median_ns);
  observed_.push_back({index, ok ? result.stats.median_ns : std::numeric_limits<double>::infinity()});
}

}  // namespace ktune
