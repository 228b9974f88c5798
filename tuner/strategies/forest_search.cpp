#include "tuner/strategies/forest_search.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "tuner/strategies/model_candidates.hpp"
#include "tuner/strategies/tree_parzen.hpp"

namespace ktune {
namespace {

// Trees in the forest. SMAC uses 10; 16 steadies the spread between trees, which is what the
// expected improvement weighs, at a cost still far below a compile. 32 scored the same on the
// recorded spaces (reports/search.md).
constexpr std::size_t kTrees = 16;

}  // namespace

std::vector<double> time_ranks(const std::vector<ScoredConfig>& observed) {
  std::vector<double> sorted;
  for (const ScoredConfig& c : observed) sorted.push_back(c.time_ns);
  std::sort(sorted.begin(), sorted.end());
  std::vector<double> ranks;
  for (const ScoredConfig& c : observed)
    ranks.push_back(static_cast<double>(std::lower_bound(sorted.begin(), sorted.end(), c.time_ns) - sorted.begin()) /
                    static_cast<double>(sorted.size()));
  return ranks;
}

double expected_improvement(double mean, double sigma, double best) {
  const double gain = best - mean;
  if (sigma <= 0) return std::max(gain, 0.0);
  const double z = gain / sigma;
  const double density = std::exp(-0.5 * z * z) / std::sqrt(2 * M_PI);
  const double below = 0.5 * std::erfc(-z / std::sqrt(2.0));
  return gain * below + sigma * density;
}

ForestSearch::ForestSearch(const ValidConfigs& valid, std::uint64_t seed, std::optional<std::size_t> budget,
                           const std::vector<Config>& prior)
    : space_(valid),
      unvisited_(valid.size()),
      rng_(seed),
      forest_(kTrees),
      startup_(tpe_startup_count(budget)),
      prior_(space_, valid, prior),
      prior_quota_(prior_start_up_count(startup_, prior_.size())) {
  startup_ += prior_quota_;  // the prior configs come on top of the spread-out ones
}

std::optional<std::size_t> ForestSearch::propose() {
  if (unvisited_.empty()) return std::nullopt;
  const bool any_success =
      std::any_of(observed_.begin(), observed_.end(), [](const ScoredConfig& c) { return std::isfinite(c.time_ns); });
  // As TPE: spread out until the start-up is done and something has succeeded, since ranks among
  // failures alone say nothing about where the fast configs are.
  if (observed_.size() < startup_ || start_up_proposals_ < startup_ || !any_success) {
    ++start_up_proposals_;
    if (prior_taken_ < prior_quota_) {
      if (const auto index = prior_.take(unvisited_)) {
        ++prior_taken_;
        handed_out_.push_back(*index);
        return index;
      }
    }
    return take_start_up_config(space_, unvisited_, handed_out_, rng_);
  }
  std::vector<std::size_t> indices;
  for (const ScoredConfig& c : observed_) indices.push_back(c.index);
  forest_.fit(space_, indices, time_ranks(observed_), rng_);

  // The best observed rank is 0. Among equal improvements (none expected anywhere, say) the
  // lower predicted rank wins.
  std::optional<std::size_t> chosen;
  double chosen_improvement = -std::numeric_limits<double>::infinity();
  double chosen_mean = std::numeric_limits<double>::infinity();
  for (const std::size_t index : model_candidates(space_, unvisited_, observed_, rng_)) {
    const auto [mean, variance] = forest_.predict(space_, index);
    const double improvement = expected_improvement(mean, std::sqrt(variance), 0.0);
    if (improvement > chosen_improvement || (improvement == chosen_improvement && mean < chosen_mean)) {
      chosen_improvement = improvement;
      chosen_mean = mean;
      chosen = index;
    }
  }
  unvisited_.remove(*chosen);
  handed_out_.push_back(*chosen);
  return chosen;
}

void ForestSearch::learn(std::size_t index, const EvaluationResult& result) {
  if (index >= space_.size()) return;
  if (unvisited_.contains(index)) handed_out_.push_back(index);  // the tune loop may evaluate configs it did not get from here
  unvisited_.remove(index);
  observed_.push_back({index, objective_ns(result)});
}

}  // namespace ktune
