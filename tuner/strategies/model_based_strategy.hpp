// What the model-based strategies (tpe, forest) share around their models: the configs observed
// so far, the start-up before a model has anything to learn from (prior configs first when a
// prior is given, then spread-out configs; prior_configs.hpp, model_candidates.hpp), and the
// bookkeeping that never proposes an index twice (observed indices the strategy did not propose
// count as visited too). A subclass supplies only the model's pick.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "tuner/core/search_space.hpp"
#include "tuner/strategies/prior_configs.hpp"
#include "tuner/strategies/space_index.hpp"
#include "tuner/strategies/split_mix.hpp"
#include "tuner/strategies/strategy.hpp"

namespace ktune {

// Start-up configs before the model takes over, for a budget of `budget` configs (nullopt: not
// known, as under a time limit).
std::size_t tpe_startup_count(std::optional<std::size_t> budget);

class ModelBasedStrategy : public Strategy {
 protected:
  ModelBasedStrategy(const ValidConfigs& valid, std::uint64_t seed, std::optional<std::size_t> budget,
                     const std::vector<Config>& prior);

  // The next config by the model, an unvisited index; called once the start-up is over and at
  // least one observation has succeeded.
  virtual std::size_t propose_from_model() = 0;

  SpaceIndex space_;
  UnvisitedSet unvisited_;
  SplitMix rng_;
  std::vector<ScoredConfig> observed_;

 private:
  std::optional<std::size_t> propose() final;
  void learn(std::size_t index, const EvaluationResult& result) final;

  std::vector<std::size_t> handed_out_;  // every index proposed or observed, for the spread-out start
  std::size_t startup_;
  std::size_t start_up_proposals_ = 0;
  PriorQueue prior_;         // prior configs valid here, best first
  std::size_t prior_quota_;  // how many prior configs come first (on top of the spread-out start-up)
  std::size_t prior_taken_ = 0;
};

}  // namespace ktune
