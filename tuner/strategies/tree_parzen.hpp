// A model-based strategy: the tree-structured Parzen estimator (TPE, Bergstra et al., NeurIPS
// 2011) on the valid configs. After a few spread-out start-up configs, the observed ones are
// split into the fastest fraction ("good") and the rest ("bad", failed configs included); each is
// modelled as a kernel density over the configs, and the next proposal is the unvisited valid
// config that maximises good(x) / bad(x), the expected improvement under this model.
//
// The start-up is budget-aware: told the budget (StrategyOptions), it spends about its square
// root on start-up configs instead of 10, so that small budgets (10-40 configs, 1-5% of many
// kernel spaces) leave most of their evaluations to the model. The start-up configs are spread
// out over the space (space_filling.hpp) rather than drawn at random, so a short start still
// samples every region, such as each code path of a GEMM.
//
// Candidates come from the valid configs themselves (model_candidates.hpp), so constraints are
// respected without any repair step. The density of configs is a sum of Gaussian kernels over
// value indices centred on the observations of that group (neighbouring values share evidence:
// block sizes and tile shapes are ordinal), taken jointly over all parameters (the multivariate
// TPE of Falkner et al., ICML 2018), because kernel parameters interact: a block size is only
// good with a matching tile size. A uniform prior keeps configs far from every observation
// reachable.
//
// Never proposes an index twice (observed indices it did not propose count as visited too);
// nullopt once every config has been visited.
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

class TreeParzen final : public Strategy {
 public:
  TreeParzen(const ValidConfigs& valid, std::uint64_t seed, std::optional<std::size_t> budget = std::nullopt,
             const std::vector<Config>& prior = {});

 private:
  std::optional<std::size_t> propose() override;
  void learn(std::size_t index, const EvaluationResult& result) override;

  // The kernel density of `sample` at config `index`, up to a factor common to all configs.
  double density(std::size_t index, const std::vector<ScoredConfig>& sample) const;

  SpaceIndex space_;
  UnvisitedSet unvisited_;
  SplitMix rng_;
  std::vector<ScoredConfig> observed_;
  std::vector<std::size_t> handed_out_;  // every index proposed or observed, for the spread-out start
  std::size_t startup_;
  std::size_t start_up_proposals_ = 0;
  PriorQueue prior_;              // prior configs valid here, best first
  std::size_t prior_quota_;       // how many prior configs come first (on top of the spread-out start-up)
  std::size_t prior_taken_ = 0;
};

}  // namespace ktune
