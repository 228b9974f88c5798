// A genetic algorithm over the valid configs. The first configs are random; once a population
// of them is observed, each proposal is a child of two parents chosen by tournament, taking
// each parameter's value from either parent (uniform crossover), and mutated by moving a
// parameter to an adjacent value in its list. A child that is not a valid config, or that was
// visited already, is repaired to the nearest unvisited valid config (in value-index steps), or
// replaced by a random unvisited one when none is near. Selection is steady state: a child
// replaces the slowest member as soon as it is faster than it.
//
// Never proposes an index twice (observed indices it did not propose count as visited too);
// nullopt once every config has been visited. A failed config (outcome other than ok) costs
// infinitely much: it loses every tournament and is the first to die out.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "tuner/core/search_space.hpp"
#include "tuner/core/split_mix.hpp"
#include "tuner/strategies/space_index.hpp"
#include "tuner/strategies/strategy.hpp"

namespace ktune {

class GeneticAlgorithm final : public Strategy {
 public:
  GeneticAlgorithm(const ValidConfigs& valid, std::uint64_t seed);

 private:
  std::optional<std::size_t> propose() override;
  void learn(std::size_t index, const EvaluationResult& result) override;

  const ScoredConfig& tournament();
  GridPoint child();

  SpaceIndex space_;
  UnvisitedSet unvisited_;
  SplitMix rng_;
  std::vector<ScoredConfig> population_;  // the parents
};

}  // namespace ktune
