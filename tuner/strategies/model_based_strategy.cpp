#include "tuner/strategies/model_based_strategy.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

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

// The guard against a misleading prior (model_based_strategy.hpp). Two start-ups of steps without
// a gain: measured on the 28 recorded spaces with a prior (reports/search.md, 2026-11-26) against
// 1, 1.5 and 3; a gain is 1%, about the spread of repeated timings, so that refining a plateau
// by noise does not count as progress.
constexpr std::size_t kPatienceInStartUps = 2;
constexpr double kMeaningfulGain = 0.01;

bool any_success(const std::vector<ScoredConfig>& observations) {
  return std::any_of(observations.begin(), observations.end(),
                     [](const ScoredConfig& c) { return std::isfinite(c.time_ns); });
}

}  // namespace

std::size_t tpe_startup_count(std::optional<std::size_t> budget) {
  if (!budget) return kStartupWithoutBudget;
  const auto root = static_cast<std::size_t>(std::llround(std::sqrt(static_cast<double>(*budget))));
  return std::clamp(root, kMinimumStartup, kMaximumStartup);
}

std::size_t prior_patience(std::optional<std::size_t> budget) {
  return kPatienceInStartUps * tpe_startup_count(budget);
}

ModelBasedStrategy::ModelBasedStrategy(const ValidConfigs& valid, std::uint64_t seed,
                                       std::optional<std::size_t> budget, const std::vector<Config>& prior)
    : space_(valid),
      unvisited_(valid.size()),
      rng_(seed),
      startup_(tpe_startup_count(budget)),
      prior_(space_, valid, prior),
      prior_quota_(prior_start_up_count(startup_, prior_.size())),
      patience_(prior_patience(budget)),
      best_ns_(std::numeric_limits<double>::infinity()) {
  startup_ += prior_quota_;  // the prior configs come on top of the spread-out ones
}

std::optional<std::size_t> ModelBasedStrategy::propose() {
  if (unvisited_.empty()) return std::nullopt;
  // Keep spreading out until the start-up is done and something has succeeded: a model fitted
  // to failures alone would steer towards them, or learn nothing.
  if (observed_.size() < startup_ || start_up_proposals_ < startup_ || !any_success(observed_)) {
    ++start_up_proposals_;
    if (prior_taken_ < prior_quota_) {
      if (const auto index = prior_.take(unvisited_)) {
        ++prior_taken_;
        handed_out_.push_back(*index);
        prior_handed_out_.push_back(*index);
        return index;
      }
    }
    return take_start_up_config(space_, unvisited_, handed_out_, rng_);
  }
  model_started_ = true;
  if (!prior_dropped_ && !prior_handed_out_.empty() && steps_since_gain_ >= patience_ &&
      any_success(observed_not_prior_))
    prior_dropped_ = true;
  const std::size_t chosen = propose_from_model(prior_dropped_ ? observed_not_prior_ : observed_);
  unvisited_.remove(chosen);
  handed_out_.push_back(chosen);
  return chosen;
}

void ModelBasedStrategy::learn(std::size_t index, const EvaluationResult& result) {
  if (index >= space_.size()) return;
  if (unvisited_.contains(index)) handed_out_.push_back(index);  // the tune loop may evaluate configs it did not get from here
  unvisited_.remove(index);
  const ScoredConfig observation{index, objective_ns(result)};
  observed_.push_back(observation);
  if (std::find(prior_handed_out_.begin(), prior_handed_out_.end(), index) == prior_handed_out_.end())
    observed_not_prior_.push_back(observation);

  const double t = observation.time_ns;
  if (std::isfinite(t) && t < best_ns_ * (1.0 - kMeaningfulGain))
    steps_since_gain_ = 0;
  else if (model_started_)
    ++steps_since_gain_;
  if (std::isfinite(t)) best_ns_ = std::min(best_ns_, t);
}

}  // namespace ktune
