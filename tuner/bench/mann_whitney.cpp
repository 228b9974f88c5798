#include "tuner/bench/mann_whitney.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <vector>

namespace ktune {
namespace {

struct Ranking {
  double rank_sum_x = 0;  // sum of the (average) ranks of the x values among all values
  double tie_term = 0;    // sum over groups of tied values of t^3 - t
  bool has_ties = false;
};

Ranking rank(std::span<const double> x, std::span<const double> y) {
  struct Value {
    double value;
    bool from_x;
  };
  std::vector<Value> all;
  all.reserve(x.size() + y.size());
  for (double v : x) all.push_back({v, true});
  for (double v : y) all.push_back({v, false});
  std::sort(all.begin(), all.end(), [](const Value& a, const Value& b) { return a.value < b.value; });

  Ranking ranking;
  for (std::size_t begin = 0; begin < all.size();) {
    std::size_t end = begin + 1;
    while (end < all.size() && all[end].value == all[begin].value) ++end;
    // Ranks are 1-based; a group of tied values shares the average of the ranks it spans.
    const double average_rank = (static_cast<double>(begin + 1) + static_cast<double>(end)) / 2;
    for (std::size_t i = begin; i < end; ++i)
      if (all[i].from_x) ranking.rank_sum_x += average_rank;
    const double t = static_cast<double>(end - begin);
    if (t > 1) {
      ranking.has_ties = true;
      ranking.tie_term += t * t * t - t;
    }
    begin = end;
  }
  return ranking;
}

// P(U >= u) under the null hypothesis, by counting: of the C(m + n, m) equally likely
// orderings of m x values and n y values, how many give each U. count[i][j][k] is the number
// of orderings of i x values and j y values with U = k; the largest value is either an x
// (it beats all j y values: k - j from the rest) or a y (it adds nothing).
double exact_upper_tail(std::size_t m, std::size_t n, std::size_t u) {
  const std::size_t max_u = m * n;
  std::vector<std::vector<std::vector<double>>> count(
      m + 1, std::vector<std::vector<double>>(n + 1, std::vector<double>(max_u + 1, 0.0)));
  for (std::size_t i = 0; i <= m; ++i) {
    for (std::size_t j = 0; j <= n; ++j) {
      if (i == 0 || j == 0) {
        count[i][j][0] = 1;  // only one ordering, and nothing to beat
        continue;
      }
      for (std::size_t k = 0; k <= i * j; ++k) {
        const double largest_is_x = k >= j ? count[i - 1][j][k - j] : 0.0;
        const double largest_is_y = count[i][j - 1][k];
        count[i][j][k] = largest_is_x + largest_is_y;
      }
    }
  }
  const std::vector<double>& distribution = count[m][n];
  const double total = std::accumulate(distribution.begin(), distribution.end(), 0.0);
  double tail = 0;
  for (std::size_t k = u; k <= max_u; ++k) tail += distribution[k];
  return tail / total;
}

}  // namespace

MannWhitneyResult mann_whitney_u(std::span<const double> x, std::span<const double> y) {
  for (std::span<const double> sample : {x, y})
    for (double v : sample)
      if (!std::isfinite(v)) throw std::invalid_argument("mann_whitney_u: samples must be finite numbers");
  MannWhitneyResult result;
  if (x.empty() || y.empty()) return result;

  const double m = static_cast<double>(x.size());
  const double n = static_cast<double>(y.size());
  const Ranking ranking = rank(x, y);
  result.u = ranking.rank_sum_x - m * (m + 1) / 2;
  // Two-sided: measure the more extreme of U and its mirror image m*n - U.
  const double u_extreme = std::max(result.u, m * n - result.u);

  if (!ranking.has_ties && x.size() <= kMannWhitneyExactLimit && y.size() <= kMannWhitneyExactLimit) {
    result.exact = true;
    const auto u_integer = static_cast<std::size_t>(std::llround(u_extreme));
    result.p_value = std::min(1.0, 2 * exact_upper_tail(x.size(), y.size(), u_integer));
    return result;
  }

  const double total = m + n;
  const double variance = m * n / 12 * ((total + 1) - ranking.tie_term / (total * (total - 1)));
  if (!(variance > 0)) return result;  // every value tied: nothing tells the samples apart
  const double z = (u_extreme - m * n / 2 - 0.5) / std::sqrt(variance);
  // Two-sided p = 2 * P(Z > z) = erfc(z / sqrt 2).
  result.p_value = std::min(1.0, std::erfc(z / std::sqrt(2.0)));
  return result;
}

double mann_whitney_smallest_p(std::size_t nx, std::size_t ny) {
  // The most extreme arrangement, run through the test itself, so the bound follows whichever
  // method (exact or approximate) these sizes get.
  std::vector<double> x(nx), y(ny);
  std::iota(y.begin(), y.end(), 0.0);
  std::iota(x.begin(), x.end(), static_cast<double>(ny));
  return mann_whitney_u(x, y).p_value;
}

}  // namespace ktune
