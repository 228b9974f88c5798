// Differential evolution over the valid configs, in value-index coordinates. The first configs
// are random; once a population of them is observed, each proposal is a trial for one member
// (the targets take turns): a mutant a + F * (b - c) of three other members, rounded to value
// indices and clipped to each list, crossed with the target parameter by parameter (each
// parameter from the mutant with probability CR, at least one), then repaired to the nearest
// unvisited valid config like the genetic algorithm's children. A trial replaces its target when
// it is faster.
//
// Trials are scored on their own target, so several proposals may be outstanding at once (the
// tune loop compiles ahead): a result is matched to the target it was proposed for.
//
// Never proposes an index twice (observed indices it did not propose count as visited too);
// nullopt once every config has been visited. A failed config costs infinitely much.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "tuner/core/search_space.hpp"
#include "tuner/core/split_mix.hpp"
#include "tuner/strategies/space_index.hpp"
#include "tuner/strategies/strategy.hpp"

namespace ktune {

class DifferentialEvolution final : public Strategy {
 public:
  DifferentialEvolution(const ValidConfigs& valid, std::uint64_t seed);

 private:
  std::optional<std::size_t> propose() override;
  void learn(std::size_t index, const EvaluationResult& result) override;

  GridPoint trial_for(std::size_t target);

  SpaceIndex space_;
  UnvisitedSet unvisited_;
  SplitMix rng_;
  std::vector<ScoredConfig> population_;
  std::size_t next_target_ = 0;
  std::unordered_map<std::size_t, std::size_t> target_of_trial_;  // proposed index -> member slot
};

}  // namespace ktune
