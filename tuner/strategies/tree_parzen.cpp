#include "tuner/strategies/tree_parzen.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "tuner/strategies/model_candidates.hpp"

namespace ktune {
namespace {

// The fastest 20% of the successful observations model "good", at least one: at small budgets a
// single best config is all the evidence there is, and counting the second best of three as
// "good" would pull the model towards the middle of the pack.
constexpr double kGoodFraction = 0.2;
constexpr std::size_t kMinimumGood = 1;
// Kernel width in value-index steps: a config one step away in one parameter shares ~14% of an
// observation's weight, two steps almost none. Chosen from 0.5, 0.7, 1.0 and 1.5 on the recorded
// spaces in shared/data (reports/search.md); wider kernels blur distinct configs together.
constexpr double kBandwidth = 0.5;
// Weight of the uniform prior relative to one observation at distance zero.
constexpr double kPriorWeight = 1e-3;
// The bad group is subsampled to this size: its density only has to be roughly right.
constexpr std::size_t kMaximumBad = 128;
// And the good group is the fastest configs up to this many, which bounds a proposal's cost on
// long tunes of big spaces.
constexpr std::size_t kMaximumGood = 256;

}  // namespace

TreeParzen::TreeParzen(const ValidConfigs& valid, std::uint64_t seed, std::optional<std::size_t> budget,
                       const std::vector<Config>& prior)
    : ModelBasedStrategy(valid, seed, budget, prior) {}

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

std::size_t TreeParzen::propose_from_model(const std::vector<ScoredConfig>& observations) {
  const auto successes = static_cast<std::size_t>(
      std::count_if(observations.begin(), observations.end(), [](const ScoredConfig& c) { return std::isfinite(c.time_ns); }));
  std::vector<ScoredConfig> sorted = observations;
  std::sort(sorted.begin(), sorted.end(), faster);
  // At least one good (a success) and, with startup_ >= kMinimumStartup observations, at least
  // two bad configs.
  const std::size_t by_fraction =
      static_cast<std::size_t>(std::ceil(kGoodFraction * static_cast<double>(successes)));
  const std::size_t good_count = std::min({successes, sorted.size() - 1, kMaximumGood, std::max(kMinimumGood, by_fraction)});
  const std::vector<ScoredConfig> good(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(good_count));
  std::vector<ScoredConfig> bad(sorted.begin() + static_cast<std::ptrdiff_t>(good_count), sorted.end());
  for (std::size_t i = bad.size(); bad.size() > kMaximumBad && i > 1; --i)  // a random subsample
    std::swap(bad[i - 1], bad[rng_.below(i)]);
  if (bad.size() > kMaximumBad) bad.resize(kMaximumBad);

  std::optional<std::size_t> best;  // model_candidates is never empty here: a config is unvisited
  double best_ratio = -std::numeric_limits<double>::infinity();
  for (const std::size_t index : model_candidates(space_, unvisited_, observations, rng_)) {
    const double ratio = density(index, good) / density(index, bad);
    if (ratio > best_ratio) {
      best_ratio = ratio;
      best = index;
    }
  }
  return *best;
}

}  // namespace ktune
