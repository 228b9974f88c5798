// A model-based strategy: the tree-structured Parzen estimator (TPE, Bergstra et al., NeurIPS
// 2011) on the valid configs. After a few random configs, the observed ones are split into the
// fastest fraction ("good") and the rest ("bad", failed configs included); each is modelled as
// a kernel density over the configs, and the next proposal is the unvisited valid config that maximises good(x) / bad(x), the expected
// improvement under this model.
//
// Candidates come from the valid configs themselves (all unvisited ones, or a random sample of
// them on big spaces), so constraints are respected without any repair step. The density of
// configs is a sum of Gaussian kernels over value indices centred on the observations of that
// group (neighbouring values share evidence: block sizes and tile shapes are ordinal), taken
// jointly over all parameters (the multivariate TPE of Falkner et al., ICML 2018), because
// kernel parameters interact: a block size is only good with a matching tile size. A uniform
// prior keeps configs far from every observation reachable.
//
// Never proposes an index twice (observed indices it did not propose count as visited too);
// nullopt once every config has been visited.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "tuner/core/search_space.hpp"
#include "tuner/strategies/space_index.hpp"
#include "tuner/strategies/split_mix.hpp"
#include "tuner/strategies/strategy.hpp"

namespace ktune {

class TreeParzen final : public Strategy {
 public:
  TreeParzen(const ValidConfigs& valid, std::uint64_t seed, std::optional<std::size_t> budget = std::nullopt);

 private:
  std::optional<std::size_t> propose() override;
  void learn(std::size_t index, const EvaluationResult& result) override;

  // The kernel density of `sample` at config `index`, up to a factor common to all configs.
  double density(std::size_t index, const std::vector<ScoredConfig>& sample) const;
  std::vector<std::size_t> candidates();
  std::size_t space_filling_start();
  std::optional<std::size_t> local_step();
  double spread(std::size_t a, std::size_t b) const;

  SpaceIndex space_;
  UnvisitedSet unvisited_;
  SplitMix rng_;
  std::vector<ScoredConfig> observed_;
  std::vector<std::size_t> handed_out_;  // every index proposed or observed, for the space-filling start
  std::optional<std::size_t> budget_;
  std::size_t startup_;
  std::size_t random_proposals_ = 0;
  std::size_t model_proposals_ = 0;
};

}  // namespace ktune
