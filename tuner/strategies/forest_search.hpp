// A model-based strategy in the manner of SMAC (Hutter et al., LION 2011): a random forest
// (regression_forest.hpp) predicts the rank of a config's time among the observed ones from its
// value indices, and the next proposal is the candidate (model_candidates.hpp) with the highest
// expected improvement over the best config so far, under a normal distribution with the
// forest's mean and its spread between trees.
//
// Why ranks, not times or their logarithm: on kernel spaces times span 10-100x between code
// paths, and a squared-error fit to times (or even log times) spends its splits on separating
// slow configs from very slow ones. Ranks weigh every observation alike, so the trees split where
// the fast configs differ from the rest. A failed config ranks after every success (tied with the
// other failures): the forest learns failing regions as slow ones, and steers around them.
//
// The start-up is shared with TPE (model_based_strategy.hpp): about sqrt(budget) spread-out
// configs, then the model from the first config on that has at least one success to rank.
//
// Never proposes an index twice (observed indices it did not propose count as visited too);
// nullopt once every config has been visited.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "tuner/core/search_space.hpp"
#include "tuner/strategies/model_based_strategy.hpp"
#include "tuner/strategies/regression_forest.hpp"

namespace ktune {

class ForestSearch final : public ModelBasedStrategy {
 public:
  ForestSearch(const ValidConfigs& valid, std::uint64_t seed, std::optional<std::size_t> budget = std::nullopt,
               const std::vector<Config>& prior = {});

 private:
  std::size_t propose_from_model(const std::vector<ScoredConfig>& observations) override;

  RegressionForest forest_;
};

// The observations' times as ranks in [0, 1): the fastest 0, ties (failures among them) sharing
// the lowest rank of their group. What ForestSearch fits its forest to.
std::vector<double> time_ranks(const std::vector<ScoredConfig>& observed);

// Expected improvement of a prediction N(mean, sigma^2) below `best` (lower is better).
double expected_improvement(double mean, double sigma, double best);

}  // namespace ktune
