// The Mann-Whitney U test (Wilcoxon rank-sum): do two sets of timing samples come from the
// same distribution? It assumes nothing about the shape of the distribution, which suits
// benchmark times (skewed, with outliers), and it compares ranks, so one slow outlier cannot
// dominate the result the way it dominates a mean.
//
//   const std::vector<double> old_ns{101, 99, 100, 102, 98};
//   const std::vector<double> new_ns{111, 109, 112, 110, 108};
//   const MannWhitneyResult r = mann_whitney_u(old_ns, new_ns);
//   // r.u == 0 (no old sample is slower than a new one), r.p_value == 2/252, r.exact == true
#pragma once

#include <cstddef>
#include <span>

namespace ktune {

// Both samples at most this large and no tied values: the p-value is exact (the distribution
// of U is counted, C(20, 10) = 184756 arrangements at most). Otherwise the normal
// approximation, which is good from about ten samples per side.
inline constexpr std::size_t kMannWhitneyExactLimit = 10;

struct MannWhitneyResult {
  double u = 0;        // U of the first sample: pairs (x, y) with x > y, a tie counting 1/2
  double p_value = 1;  // two-sided
  bool exact = false;  // from the exact distribution of U, not the normal approximation
};

// Two-sided test. The normal approximation uses the tie-corrected variance and a continuity
// correction of 1/2, as scipy.stats.mannwhitneyu(x, y, use_continuity=True) does. When every
// value is tied the samples cannot be told apart: p = 1. Empty samples give u = 0, p = 1.
MannWhitneyResult mann_whitney_u(std::span<const double> x, std::span<const double> y);

// The smallest two-sided p-value the test can give for samples of these sizes: that of the
// most extreme arrangement (every x above every y, no ties); in the exact range it is
// 2 / C(nx + ny, nx). With nx = ny = 3 it is 0.1, so three repetitions a side can never be
// significant at alpha = 0.05; with four a side it is 0.029.
double mann_whitney_smallest_p(std::size_t nx, std::size_t ny);

}  // namespace ktune
