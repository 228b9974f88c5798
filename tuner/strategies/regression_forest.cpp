#include "tuner/strategies/regression_forest.hpp"

#include <algorithm>
#include <numeric>
#include <optional>

namespace ktune {
namespace {

// Statistics of the samples at one value of one parameter, for scanning the split points.
struct Bucket {
  std::size_t count = 0;
  double sum = 0;
  double squares = 0;
};

double squared_error(std::size_t count, double sum, double squares) {
  return count == 0 ? 0.0 : squares - sum * sum / static_cast<double>(count);
}

}  // namespace

void RegressionForest::fit(const SpaceIndex& space, const std::vector<std::size_t>& indices,
                           const std::vector<double>& values, SplitMix& rng) {
  trees_.assign(tree_count_, Tree{});
  const std::size_t n = indices.size();
  std::vector<std::size_t> rows(n);
  for (Tree& tree : trees_) {
    // A bootstrap sample: n draws with replacement.
    for (std::size_t& row : rows) row = rng.below(n);
    tree.emplace_back();
    grow(space, indices, values, rows, 0, n, tree, 0, rng);
  }
}

void RegressionForest::grow(const SpaceIndex& space, const std::vector<std::size_t>& indices,
                            const std::vector<double>& values, std::vector<std::size_t>& rows, std::size_t begin,
                            std::size_t end, Tree& tree, std::size_t at, SplitMix& rng) const {
  const std::size_t count = end - begin;
  double sum = 0, squares = 0;
  for (std::size_t r = begin; r < end; ++r) {
    sum += values[rows[r]];
    squares += values[rows[r]] * values[rows[r]];
  }
  tree[at].value = sum / static_cast<double>(count);
  const double parent_error = squared_error(count, sum, squares);
  // Nothing to gain: one sample, or all alike (up to rounding).
  if (count < 2 || parent_error <= 1e-12 * (1.0 + squares)) return;

  // The split that lowers the squared error most, over every parameter and every boundary
  // between two observed values of it. Parameters are tried in random order so that equally
  // good splits are chosen at random, one more source of diversity between the trees.
  std::vector<std::size_t> order(space.parameter_count());
  std::iota(order.begin(), order.end(), std::size_t{0});
  for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);
  double best_error = parent_error;
  std::size_t best_parameter = 0;
  std::uint32_t best_lower = 0, best_upper = 0;
  std::vector<Bucket> buckets;
  for (const std::size_t p : order) {
    if (space.value_count(p) < 2) continue;
    buckets.assign(space.value_count(p), Bucket{});
    for (std::size_t r = begin; r < end; ++r) {
      Bucket& bucket = buckets[space.coordinate(indices[rows[r]], p)];
      const double y = values[rows[r]];
      ++bucket.count;
      bucket.sum += y;
      bucket.squares += y * y;
    }
    Bucket left;
    std::optional<std::uint32_t> lower;  // the highest observed value on the left so far
    for (std::uint32_t v = 0; v < buckets.size(); ++v) {
      if (buckets[v].count == 0) continue;
      if (lower && left.count > 0) {
        const double error = squared_error(left.count, left.sum, left.squares) +
                             squared_error(count - left.count, sum - left.sum, squares - left.squares);
        if (error < best_error) {
          best_error = error;
          best_parameter = p;
          best_lower = *lower;
          best_upper = v;
        }
      }
      left.count += buckets[v].count;
      left.sum += buckets[v].sum;
      left.squares += buckets[v].squares;
      lower = v;
    }
  }
  if (best_error >= parent_error - 1e-12 * (1.0 + squares)) return;

  const auto middle = std::partition(rows.begin() + static_cast<std::ptrdiff_t>(begin),
                                     rows.begin() + static_cast<std::ptrdiff_t>(end), [&](std::size_t row) {
                                       return space.coordinate(indices[row], best_parameter) <= best_lower;
                                     });
  const auto split = static_cast<std::size_t>(middle - rows.begin());
  const auto left_child = static_cast<std::uint32_t>(tree.size());
  tree[at].parameter = static_cast<std::uint32_t>(best_parameter);
  tree[at].threshold = best_lower + rng.uniform() * static_cast<double>(best_upper - best_lower);
  tree[at].left = left_child;
  tree.emplace_back();
  tree.emplace_back();
  grow(space, indices, values, rows, begin, split, tree, left_child, rng);
  grow(space, indices, values, rows, split, end, tree, left_child + 1, rng);
}

RegressionForest::Prediction RegressionForest::predict(const SpaceIndex& space, std::size_t index) const {
  double sum = 0, squares = 0;
  for (const Tree& tree : trees_) {
    std::size_t at = 0;
    while (tree[at].left != 0)
      at = static_cast<double>(space.coordinate(index, tree[at].parameter)) <= tree[at].threshold ? tree[at].left
                                                                                                  : tree[at].left + 1;
    sum += tree[at].value;
    squares += tree[at].value * tree[at].value;
  }
  const double count = static_cast<double>(trees_.size());
  const double mean = sum / count;
  return {mean, std::max(0.0, squares / count - mean * mean)};
}

}  // namespace ktune
