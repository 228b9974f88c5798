#include "tuner/strategies/model_based_strategy.hpp"

#include <algorithm>
#include <cmath>

#include "tuner/strategies/model_candidates.hpp"

namespace ktune {
namespace {

// Start-up configs before the model takes over. Without a budget, 10: enough for a first split
// into good and bad. With a budget, about its square root, between 3 and 10: a budget of 7
// cannot afford 10 blind configs, and the square root is the usual balance of exploring against
// exploiting, its share of the budget falling as the budget grows (7 -> 3, 25 -> 5, 100 -> 10).
// At least 3, so the model starts from one good config and at least two bad ones to steer away
// from. Measured on the 16 development spaces of reports/search.md against 10 at every budget.
constexpr std::size_t kStartupWithoutBudget = 10;
constexpr std::size_t kMinimumStartup = 3;
constexpr std::size_t kMaximumStartup = 10;

}  // namespace

std::size_t tpe_startup_count(std::optional<std::size_t> budget) {
  if (!budget) return kStartupWithoutBudget;
  const auto root = static_cast<std::size_t>(std::llround(std::sqrt(static_cast<double>(*budget))));
  return std::clamp(root, kMinimumStartup, kMaximumStartup);
}

ModelBasedStrategy::ModelBasedStrategy(const ValidConfigs& valid, std::uint64_t seed,
                                       std::optional<std::size_t> budget, const std::vector<Config>& prior)
    : space_(valid),
      unvisited_(valid.size()),
      rng_(seed),
      startup_(tpe_startup_count(budget)),
      prior_(space_, valid, prior),
      prior_quota_(prior_start_up_count(startup_, prior_.size())) {
  startup_ += prior_quota_;  // the prior configs come on top of the spread-out ones
}

std::optional<std::size_t> ModelBasedStrategy::propose() {
  if (unvisited_.empty()) return std::nullopt;
  const bool any_success =
      std::any_of(observed_.begin(), observed_.end(), [](const ScoredConfig& c) { return std::isfinite(c.time_ns); });
  // Keep spreading out until the start-up is done and something has succeeded: a model fitted
  // to failures alone would steer towards them, or learn nothing.
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
  const std::size_t chosen = propose_from_model();
  unvisited_.remove(chosen);
  handed_out_.push_back(chosen);
  return chosen;
}

void ModelBasedStrategy::learn(std::size_t index, const EvaluationResult& result) {
  if (index >= space_.size()) return;
  if (unvisited_.contains(index)) handed_out_.push_back(index);  // the tune loop may evaluate configs it did not get from here
  unvisited_.remove(index);
  observed_.push_back({index, objective_ns(result)});
}

}  // namespace ktune
