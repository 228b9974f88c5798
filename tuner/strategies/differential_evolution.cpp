#include "tuner/strategies/differential_evolution.hpp"

#include <algorithm>
#include <cmath>

namespace ktune {
namespace {

// Small for the same reason as the genetic algorithm's: budgets are a few hundred evaluations,
// so evolution has to start after a few percent of a space of thousands of configs.
constexpr std::size_t kPopulation = 8;
// The usual DE/rand/1/bin constants. In value-index units F = 0.8 turns a difference of one or
// two steps into a move of one or two steps, which is the scale neighbouring configs differ on.
constexpr double kScale = 0.8;
constexpr double kCrossover = 0.9;
// As in the genetic algorithm: a repair further than this is a random restart instead.
constexpr std::size_t kMaxRepairDistance = 3;

}  // namespace

DifferentialEvolution::DifferentialEvolution(const ValidConfigs& valid, std::uint64_t seed)
    : space_(valid), unvisited_(valid.size()), rng_(seed) {}

std::optional<std::size_t> DifferentialEvolution::propose() {
  if (population_.size() < kPopulation) return unvisited_.take_random(rng_);
  const std::size_t target = next_target_;
  next_target_ = (next_target_ + 1) % population_.size();
  const auto index = take_repaired(space_, unvisited_, trial_for(target), kMaxRepairDistance, rng_);
  if (index) target_of_trial_[*index] = target;
  return index;
}

GridPoint DifferentialEvolution::trial_for(std::size_t target) {
  // Three distinct members other than the target.
  std::size_t picks[3];
  for (std::size_t k = 0; k < 3; ++k) {
    std::size_t candidate;
    do {
      candidate = rng_.below(population_.size());
    } while (candidate == target || std::find(picks, picks + k, candidate) != picks + k);
    picks[k] = candidate;
  }
  // DE/best/1: mutants start from the fastest member, which converges within the few
  // generations a budget of a few hundred evaluations allows (DE/rand/1 explores longer).
  const auto best = std::min_element(population_.begin(), population_.end(), faster);
  const GridPoint a = space_.point(best->index);
  const GridPoint b = space_.point(population_[picks[1]].index);
  const GridPoint c = space_.point(population_[picks[2]].index);
  GridPoint trial = space_.point(population_[target].index);
  const std::size_t forced = rng_.below(trial.size());  // at least one parameter from the mutant
  for (std::size_t p = 0; p < trial.size(); ++p) {
    if (p != forced && rng_.uniform() >= kCrossover) continue;
    const double mutant = static_cast<double>(a[p]) + kScale * (static_cast<double>(b[p]) - static_cast<double>(c[p]));
    const double top = static_cast<double>(space_.value_count(p) - 1);
    trial[p] = static_cast<std::uint32_t>(std::clamp(std::round(mutant), 0.0, top));
  }
  return trial;
}

void DifferentialEvolution::learn(std::size_t index, const EvaluationResult& result) {
  if (index >= space_.size()) return;
  unvisited_.remove(index);  // the tune loop may evaluate configs it did not get from here
  const ScoredConfig member{index, objective_ns(result)};
  const auto trial = target_of_trial_.find(index);
  if (trial != target_of_trial_.end()) {
    ScoredConfig& target = population_[trial->second];
    if (faster(member, target)) target = member;
    target_of_trial_.erase(trial);
    return;
  }
  if (population_.size() < kPopulation) {
    population_.push_back(member);
    return;
  }
  // A config the strategy did not propose (the family's default, a reused result): it joins in
  // place of the slowest member when faster, so no information is thrown away.
  replace_slowest_if_faster(population_, member);
}

}  // namespace ktune
