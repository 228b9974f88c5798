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
// The start-up is TPE's (tree_parzen.hpp): about sqrt(budget) spread-out configs, then the model
// from the first config on that has at least one success to rank.
//
// Never proposes an index twice (observed indices it did not propose count as visited too);
// nullopt once every config has been visited.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "tuner/core/search_space.hpp"
#include "tuner/strategies/regression_forest.hpp"
#include "tuner/strategies/prior_configs.hpp"
#include "tuner/strategies/space_index.hpp"
#include "tuner/strategies/split_mix.hpp"
#include "tuner/strategies/strategy.hpp"

namespace ktune {

class ForestSearch final : public Strategy {
 public:
  ForestSearch(const ValidConfigs& valid, std::uint64_t seed, std::optional<std::size_t> budget = std::nullopt,
               const std::vector<Config>& prior = {});

 private:
  std::optional<std::size_t> propose() override;
  void learn(std::size_t index, const EvaluationResult& result) override;

  SpaceIndex space_;
  UnvisitedSet unvisited_;
  SplitMix rng_;
  RegressionForest forest_;
  std::vector<ScoredConfig> observed_;
  std::vector<std::size_t> handed_out_;  // every index proposed or observed, for the spread-out start
  std::size_t startup_;
  std::size_t start_up_proposals_ = 0;
  PriorQueue prior_;              // prior configs valid here, best first
  std::size_t prior_quota_;       // how many prior configs come first (on top of the spread-out start-up)
  std::size_t prior_taken_ = 0;
};

// The observations' times as ranks in [0, 1): the fastest 0, ties (failures among them) sharing
// the lowest rank of their group. What ForestSearch fits its forest to.
std::vector<double> time_ranks(const std::vector<ScoredConfig>& observed);

// Expected improvement of a prediction N(mean, sigma^2) below `best` (lower is better).
double expected_improvement(double mean, double sigma, double best);

}  // namespace ktune
