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
// Kernel width in value-index steps: a config one step away in one parameter shares ~14% of an
// observation's weight, two steps almost none. Chosen from 0.5, 0.7, 1.0 and 1.5 on the recorded
// spaces in shared/data (reports/search.md); wider kernels blur distinct configs together.
constexpr double kBandwidth = 0.5;
// Weight of the uniform prior relative to one observation at distance zero.
constexpr double kPriorWeight = 1e-3;
// Candidates per proposal on bigger spaces: a random sample of the unvisited configs, plus the
// unvisited neighbours of the best configs, where the good density is highest.
constexpr std::size_t kRandomCandidates = 512;
constexpr std::size_t kIncumbents = 4;
// The bad group is subsampled to this size: its density only has to be roughly right.
constexpr std::size_t kMaximumBad = 128;
// And the good group is the fastest configs up to this many, which bounds a proposal's cost on
// long tunes of big spaces.
constexpr std::size_t kMaximumGood = 256;

}  // namespace

TreeParzen::TreeParzen(const ValidConfigs& valid, std::uint64_t seed)
    : space_(valid), unvisited_(valid.size()), rng_(seed) {}

double TreeParzen::density(std::size_t index, const std::vector<ScoredConfig>& sample) const {
  double sum = kPriorWeight;
  const std::size_t width = space_.parameter_count();
  for (const ScoredConfig& observation : sample) {
    double squared = 0;
    for (std::size_t p = 0; p < width; ++p) {
      const double d = (static_cast<double>(space_.coordinate(index, p)) -
                        static_cast<double>(space_.coordinate(observation.index, p))) / kBandwidth;
      squared += d * d;
    }
    sum += std::exp(-0.5 * squared);
  }
  return sum / (kPriorWeight + static_cast<double>(sample.size()));
}

std::vector<std::size_t> TreeParzen::candidates() {
  std::vector<std::size_t> chosen;
  if (unvisited_.count() <= kRandomCandidates) {
    for (std::size_t i = 0; i < space_.size(); ++i)
      if (unvisited_.contains(i)) chosen.push_back(i);
    return chosen;
  }
  for (std::size_t k = 0; k < kRandomCandidates; ++k) {
    std::size_t index;
    do index = rng_.below(space_.size());
    while (!unvisited_.contains(index));
    chosen.push_back(index);
  }
  // Neighbours of the fastest observations: one value step in one parameter.
  std::vector<ScoredConfig> best = observed_;
  const std::size_t incumbents = std::min(kIncumbents, best.size());
  std::partial_sort(best.begin(), best.begin() + static_cast<std::ptrdiff_t>(incumbents), best.end(), faster);
  for (std::size_t b = 0; b < incumbents; ++b) {
    GridPoint point = space_.point(best[b].index);
    for (std::size_t p = 0; p < point.size(); ++p) {
      for (const int step : {-1, 1}) {
        const std::uint32_t original = point[p];
        if (step < 0 && original == 0) continue;
        point[p] = original + static_cast<std::uint32_t>(step);
        if (const auto index = space_.find(point); index && unvisited_.contains(*index)) chosen.push_back(*index);
        point[p] = original;
      }
    }
  }
  return chosen;
}

std::optional<std::size_t> TreeParzen::propose() {
  if (unvisited_.empty()) return std::nullopt;
  if (observed_.size() < kStartup || random_proposals_ < kStartup) {
    ++random_proposals_;
    return unvisited_.take_random(rng_);
  }
  std::vector<ScoredConfig> sorted = observed_;
  std::sort(sorted.begin(), sorted.end(), faster);
  const std::size_t by_fraction =
      static_cast<std::size_t>(std::ceil(kGoodFraction * static_cast<double>(sorted.size())));
  const std::size_t good_count = std::min({sorted.size() - 1, kMaximumGood, std::max(kMinimumGood, by_fraction)});
  const std::vector<ScoredConfig> good(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(good_count));
  std::vector<ScoredConfig> bad(sorted.begin() + static_cast<std::ptrdiff_t>(good_count), sorted.end());
  for (std::size_t i = bad.size(); bad.size() > kMaximumBad && i > 1; --i)  // a random subsample
    std::swap(bad[i - 1], bad[rng_.below(i)]);
  if (bad.size() > kMaximumBad) bad.resize(kMaximumBad);

  std::optional<std::size_t> best;
  double best_ratio = -std::numeric_limits<double>::infinity();
  for (const std::size_t index : candidates()) {
    const double ratio = density(index, good) / density(index, bad);
    if (ratio > best_ratio) {
      best_ratio = ratio;
      best = index;
    }
  }
  unvisited_.remove(*best);
  return best;
}

void TreeParzen::learn(std::size_t index, const EvaluationResult& result) {
  if (index >= space_.size()) return;
  unvisited_.remove(index);  // the tune loop may evaluate configs it did not get from here
  observed_.push_back({index, objective_ns(result)});
}

}  // namespace ktune
