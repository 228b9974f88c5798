// What the model-based strategies (tpe, forest) share around their models: the configs observed
// so far, the start-up before a model has anything to learn from (prior configs first when a
// prior is given, then spread-out configs; prior_configs.hpp, model_candidates.hpp), and the
// bookkeeping that never proposes an index twice (observed indices the strategy did not propose
// count as visited too), and the guard against a misleading prior (below). A subclass supplies
// only the model's pick.
//
// The guard (negative transfer): a prior from a space whose fast region is not this one's can
// hold a run there, the model refining around the prior configs instead of finding this space's
// region (reports/search.md, 2026-11-26). So once the model has gone prior_patience(budget)
// steps without finding a config at least 1% faster than the best so far, the prior configs
// leave the observations the model is fitted to (they stay visited, and their times stay in the
// run's best); everything the run chose itself stays. Without a prior nothing changes.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "tuner/core/search_space.hpp"
#include "tuner/core/split_mix.hpp"
#include "tuner/strategies/prior_configs.hpp"
#include "tuner/strategies/space_index.hpp"
#include "tuner/strategies/strategy.hpp"

namespace ktune {

// Start-up configs before the model takes over, for a budget of `budget` configs (nullopt: not
// known, as under a time limit).
std::size_t tpe_startup_count(std::optional<std::size_t> budget);

// Model steps without a 1% gain after which the prior configs stop being fitted: two start-ups.
std::size_t prior_patience(std::optional<std::size_t> budget);

class ModelBasedStrategy : public Strategy {
 protected:
  ModelBasedStrategy(const ValidConfigs& valid, std::uint64_t seed, std::optional<std::size_t> budget,
                     const std::vector<Config>& prior);

  // The next config by a model fitted to `observations` (observed_, or observed_ without the
  // prior configs once the guard has dropped them), an unvisited index; called once the start-up
  // is over and at least one of `observations` has succeeded.
  virtual std::size_t propose_from_model(const std::vector<ScoredConfig>& observations) = 0;

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

  // The guard against a misleading prior.
  std::vector<std::size_t> prior_handed_out_;      // the prior configs proposed, as indices
  std::vector<ScoredConfig> observed_not_prior_;  // observed_ without them
  bool prior_dropped_ = false;
  std::size_t patience_;
  bool model_started_ = false;
  std::size_t steps_since_gain_ = 0;  // observations since the model started without a 1% gain
  double best_ns_;                     // the fastest observation so far
};

}  // namespace ktune
