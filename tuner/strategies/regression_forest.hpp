// A random forest regressor over the configs of a space (Breiman 2001, as SMAC uses it: Hutter
// et al., LION 2011): each tree is grown on a bootstrap sample of the observations, splitting on
// one parameter's value index at a time. The forest's prediction for a config is the mean of its
// trees' leaf values, and the spread between the trees is the uncertainty a search can weigh
// against it (expected improvement).
//
// Why trees for kernel spaces: one parameter often picks a code path that is 10-100x slower than
// another (SIMT against tensor cores), and parameters interact (a tile size is only good with a
// matching block size). A tree splits on the path parameter first and models each path on its
// own; a smooth kernel model blurs them together.
//
// Split points are drawn uniformly between the two neighbouring observed values of the split
// parameter rather than at their midpoint, so that trees disagree about the unobserved values in
// between: averaged over the forest, the prediction there interpolates, and the spread is larger
// than at the observed values.
//
//   RegressionForest forest;
//   forest.fit(space, indices, values, rng);        // values[i] belongs to config indices[i]
//   const auto [mean, variance] = forest.predict(space, candidate);
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "tuner/core/split_mix.hpp"
#include "tuner/strategies/space_index.hpp"

namespace ktune {

class RegressionForest {
 public:
  struct Prediction {
    double mean;
    double variance;  // between the trees' predictions
  };

  explicit RegressionForest(std::size_t trees = 32) : tree_count_(trees) {}

  // Grows the forest anew on these observations (at least one).
  void fit(const SpaceIndex& space, const std::vector<std::size_t>& indices, const std::vector<double>& values,
           SplitMix& rng);
  Prediction predict(const SpaceIndex& space, std::size_t index) const;

 private:
  struct Node {
    // A split node sends configs with coordinate(parameter) <= threshold to `left`, the others
    // to left + 1; a leaf (left == 0) predicts `value`.
    std::uint32_t parameter = 0;
    double threshold = 0;
    std::uint32_t left = 0;
    double value = 0;
  };
  using Tree = std::vector<Node>;

  // Grows the subtree of the samples in rows[begin, end) into node `at` of `tree`.
  void grow(const SpaceIndex& space, const std::vector<std::size_t>& indices, const std::vector<double>& values,
            std::vector<std::size_t>& rows, std::size_t begin, std::size_t end, Tree& tree, std::size_t at,
            SplitMix& rng) const;

  std::size_t tree_count_;
  std::vector<Tree> trees_;
};

}  // namespace ktune
