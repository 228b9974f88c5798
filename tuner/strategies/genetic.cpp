#include "tuner/strategies/genetic.hpp"

#include <algorithm>
#include <cmath>

namespace ktune {
namespace {

// Small, so that selection starts after a few percent of a space of thousands of configs: the
// budgets this is meant for are a few hundred evaluations.
constexpr std::size_t kPopulation = 12;
constexpr std::size_t kTournament = 3;
// A repair that moves further than this (in value-index steps) is no longer the child; a random
// config then keeps the search from collapsing onto one corner.
constexpr std::size_t kMaxRepairDistance = 3;

}  // namespace

GeneticAlgorithm::GeneticAlgorithm(const ValidConfigs& valid, std::uint64_t seed)
    : space_(valid), unvisited_(valid.size()), rng_(seed) {}

std::optional<std::size_t> GeneticAlgorithm::propose() {
  if (population_.size() < kPopulation) return unvisited_.take_random(rng_);
  return take_repaired(space_, unvisited_, child(), kMaxRepairDistance, rng_);
}

const ScoredConfig& GeneticAlgorithm::tournament() {
  const ScoredConfig* winner = &population_[rng_.below(population_.size())];
  for (std::size_t round = 1; round < kTournament; ++round) {
    const ScoredConfig& rival = population_[rng_.below(population_.size())];
    if (faster(rival, *winner)) winner = &rival;
  }
  return *winner;
}

GridPoint GeneticAlgorithm::child() {
  const GridPoint mother = space_.point(tournament().index);
  const GridPoint father = space_.point(tournament().index);
  GridPoint point(mother.size());
  for (std::size_t p = 0; p < point.size(); ++p) point[p] = rng_.below(2) == 0 ? mother[p] : father[p];
  // On average one parameter mutates, one step along its value list.
  for (std::size_t p = 0; p < point.size(); ++p) {
    const std::uint32_t values = space_.value_count(p);
    if (values < 2 || rng_.below(point.size()) != 0) continue;
    const bool up = point[p] == 0 || (point[p] + 1 < values && rng_.below(2) == 0);
    point[p] = up ? point[p] + 1 : point[p] - 1;
  }
  return point;
}

void GeneticAlgorithm::learn(std::size_t index, const EvaluationResult& result) {
  if (index >= space_.size()) return;
  unvisited_.remove(index);  // the tune loop may evaluate configs it did not get from here
  const ScoredConfig member{index, objective_ns(result)};
  if (population_.size() < kPopulation) {
    population_.push_back(member);
    return;
  }
  // Steady state: a child replaces the worst member at once when it is faster, so a good child
  // breeds after one evaluation instead of a whole generation (budgets are a few generations).
  replace_slowest_if_faster(population_, member);
}

}  // namespace ktune
