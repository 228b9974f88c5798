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
#include "tuner/strategies/model_based_strategy.hpp"

namespace ktune {

class TreeParzen final : public ModelBasedStrategy {
 public:
  TreeParzen(const ValidConfigs& valid, std::uint64_t seed, std::optional<std::size_t> budget = std::nullopt,
             const std::vector<Config>& prior = {});

 private:
  std::size_t propose_from_model(const std::vector<ScoredConfig>& observations) override;

  // The kernel density of `sample` at config `index`, up to a factor common to all configs.
  double density(std::size_t index, const std::vector<ScoredConfig>& sample) const;
};

}  // namespace ktune
