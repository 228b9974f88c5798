// Finds where the level of a benchmark's history changed: given a kernel's median time at each
// of a series of commits, returns the commits at which a new level began. A gate that compares
// the newest point with a fixed threshold misses a slow drift, fires on one noisy run and cannot
// say which commit was to blame; this looks at the whole history instead, needs no threshold,
// and reports a level change only when the points on its two sides are distributed differently
// beyond what shuffling them would give.
//
//   const std::vector<ChangePoint> changes =
//       detect_change_points(median_ns_by_commit, {.min_relative_change = 0.02});
//   for (const ChangePoint& change : changes)
//     if (change.relative_change > 0) ...  // commit change.index made the kernel slower
//
// Method: E-divisive means (Matteson & James 2014), as in MongoDB's signal-processing and Apache
// Otava. The energy distance with |x - y| as distance measures how differently two sets of
// points are distributed. Within every current segment z_0 .. z_{T-1} each split tau (at least
// min_segment points a side) is scored by
//   Q(tau) = m n / T * (2/(m n) sum|x - y| - sum_{pairs in X}|x - x'| / C(m,2)
//                                          - sum_{pairs in Y}|y - y'| / C(n,2))
// with X = z_0 .. z_{tau-1} (m points) and Y = z_tau .. z_{T-1} (n points): Otava's variant,
// where Y runs to the segment end (the paper also searches Y's end). The best split over all
// segments is tested by permutation: the points are shuffled within each current segment and the
// best Q over all segments recomputed, `permutations` times; p = (number of shuffles scoring >=
// the observed Q + 1) / (permutations + 1). The split becomes a change point when p < alpha and
// the search repeats on the new segments; it stops at the first rejected split. So p can be no
// smaller than 1 / (permutations + 1): with alpha * (permutations + 1) <= 1 nothing is ever found,
// and with the defaults (0.01, 199) a split is accepted only when no shuffle scores as high.
// Because Y runs to the segment end, a short excursion that returns to the old level (a few slow
// commits, a single outlier) is rarely reported: it does not split its segment into two levels.
//
// Afterwards, while some change point's |relative_change| is below min_relative_change, the
// smallest such one is dropped and the means of its merged neighbours recomputed.
//
// Cost: scoring every split of a segment of T points is O(T log T) (one pass over the points with
// a Fenwick tree over their ranks), so one pass of the search is O((permutations + 1) n log n) and
// the whole detection O(k (permutations + 1) n log n) for k change points. n = 2000 with 199
// permutations takes about 15 ms per pass (-O2): 0.06 s for 4 change points, 0.3 s for 20. A
// rejected test stops shuffling as soon as its p-value reaches alpha, so a flat history is cheap.
// Results are identical on every platform for a seed: the shuffles use splitmix64 and a
// Fisher-Yates of our own, not the standard library's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ktune {

struct ChangePointOptions {
  double alpha = 0.01;               // significance of the permutation test for each new change point
  std::size_t permutations = 199;    // permutations per test
  std::size_t min_segment = 3;       // fewest points on each side of a change point
  double min_relative_change = 0.0;  // a change point with |mean_after / mean_before - 1| below
                                     // this is dropped (0.02 ignores shifts under 2%)
  std::uint64_t seed = 1;            // the permutations are deterministic from this seed
};

struct ChangePoint {
  std::size_t index = 0;       // first point of the new segment (1 <= index < n)
  double p_value = 1;          // of the permutation test that accepted it
  double mean_before = 0;      // mean of the segment that ends at index - 1 (from the previous change point)
  double mean_after = 0;       // mean of the segment that starts at index (to the next change point)
  double relative_change = 0;  // mean_after / mean_before - 1; +-infinity when only mean_before is 0
};

// Change points of a univariate series, ordered by index; every segment between them (and the
// series' ends) has at least min_segment points. Empty for a series shorter than 2 * min_segment.
// Throws std::invalid_argument for alpha outside (0, 1), permutations 0, min_segment 0,
// min_relative_change negative or not finite, or a non-finite value in the series.
std::vector<ChangePoint> detect_change_points(const std::vector<double>& series,
                                              const ChangePointOptions& options = {});

}  // namespace ktune
