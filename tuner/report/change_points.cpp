#include "tuner/report/change_points.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>

#include "tuner/core/split_mix.hpp"

namespace ktune {
namespace {

void check_options(const std::vector<double>& series, const ChangePointOptions& options) {
  if (!(options.alpha > 0 && options.alpha < 1))
    throw std::invalid_argument("change points: alpha must be in (0, 1)");
  if (options.permutations == 0) throw std::invalid_argument("change points: permutations must be positive");
  if (options.min_segment == 0) throw std::invalid_argument("change points: min_segment must be positive");
  if (!std::isfinite(options.min_relative_change) || options.min_relative_change < 0)
    throw std::invalid_argument("change points: min_relative_change must be finite and not negative");
  for (double value : series)
    if (!std::isfinite(value)) throw std::invalid_argument("change points: the series has a non-finite value");
}

// Uniform in [0, bound) without modulo bias: draws landing in the incomplete last block of
// 2^64 / bound are redrawn. Ours rather than std::uniform_int_distribution so that a seed gives
// the same shuffles with every standard library.
std::size_t draw_below(SplitMix& rng, std::size_t bound) {
  const std::uint64_t range = bound;
  const std::uint64_t incomplete_block = (0 - range) % range;  // 2^64 mod range
  std::uint64_t draw = rng.next();
  while (draw < incomplete_block) draw = rng.next();
  return static_cast<std::size_t>(draw % range);
}

template <typename T>
void fisher_yates_shuffle(std::vector<T>& items, SplitMix& rng) {
  for (std::size_t i = items.size(); i > 1; --i) std::swap(items[i - 1], items[draw_below(rng, i)]);
}

// Counts and sums of the values inserted so far, queried by rank: gives sum |z_k - z_i| over the
// earlier points in O(log T) instead of O(T).
class RankedSums {
 public:
  explicit RankedSums(std::size_t size) : nodes_(size + 1) {}

  void insert(std::size_t rank, double value) {
    total_count_ += 1;
    total_sum_ += value;
    for (std::size_t node = rank + 1; node < nodes_.size(); node += node & (0 - node)) {
      nodes_[node].count += 1;
      nodes_[node].sum += value;
    }
  }
  // Sum of |value - v| over the inserted v; `rank` is value's own rank (not inserted yet).
  double distance_sum(std::size_t rank, double value) const {
    double below_count = 0;
    double below_sum = 0;
    for (std::size_t node = rank; node > 0; node -= node & (0 - node)) {
      below_count += nodes_[node].count;
      below_sum += nodes_[node].sum;
    }
    const double above_count = total_count_ - below_count;
    const double above_sum = total_sum_ - below_sum;
    return (value * below_count - below_sum) + (above_sum - value * above_count);
  }

 private:
  struct Node {  // count and sum side by side: one cache line per step of the walk
    double count = 0;
    double sum = 0;
  };
  std::vector<Node> nodes_;  // a Fenwick tree, 1-based
  double total_count_ = 0;
  double total_sum_ = 0;
};

// One segment's points as ranks into its sorted values. A shuffle permutes the ranks only: the
// set of values, and so everything that depends on the values alone, is the same for every
// permutation.
struct RankedSegment {
  std::vector<double> sorted_values;    // centred on the segment mean (keeps the sums small), ascending
  std::vector<double> distance_to_all;  // by rank: sum of |v - w| over all the segment's values w
  std::vector<std::size_t> ranks;       // ranks[i]: rank of the segment's i-th point in current order
};

RankedSegment rank_segment(const std::vector<double>& series, std::size_t begin, std::size_t end) {
  const std::size_t size = end - begin;
  double mean = 0;
  for (std::size_t i = begin; i < end; ++i) mean += series[i];
  mean /= static_cast<double>(size);

  std::vector<std::size_t> order(size);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return series[begin + a] < series[begin + b]; });
  RankedSegment segment;
  segment.sorted_values.resize(size);
  segment.ranks.resize(size);
  for (std::size_t rank = 0; rank < size; ++rank) {
    segment.sorted_values[rank] = series[begin + order[rank]] - mean;
    segment.ranks[order[rank]] = rank;
  }

  // In sorted order, the values below rank r sum to `below` and those above to total - below - v.
  const double total = std::accumulate(segment.sorted_values.begin(), segment.sorted_values.end(), 0.0);
  segment.distance_to_all.resize(size);
  double below = 0;
  for (std::size_t rank = 0; rank < size; ++rank) {
    const double value = segment.sorted_values[rank];
    const double above = total - below - value;
    segment.distance_to_all[rank] = (value * static_cast<double>(rank) - below) +
                                    (above - value * static_cast<double>(size - 1 - rank));
    below += value;
  }
  return segment;
}

struct Split {
  std::size_t tau = 0;  // first point of the right part, relative to the segment start
  double score = -std::numeric_limits<double>::infinity();
};

// The split of the segment (in its current order) with the largest weighted energy statistic Q;
// the earliest on ties. The segment has at least 2 * min_segment points.
//
// One pass from the left gives, at each tau, the pair sum within the left part W_X (a Fenwick
// tree over ranks) and the sum of distance_to_all over the left part, which counts every
// left-left pair twice and every left-right pair once; so the between sum B and, from the total,
// the pair sum within the right part W_Y follow without a second pass.
Split best_split(const RankedSegment& segment, std::size_t min_segment) {
  const std::size_t size = segment.ranks.size();
  const double total = static_cast<double>(size);
  const double all_pairs =
      std::accumulate(segment.distance_to_all.begin(), segment.distance_to_all.end(), 0.0) / 2;

  RankedSums left(size);
  double within_left = 0;
  double left_distances = 0;
  Split best;
  for (std::size_t tau = 0; tau + min_segment <= size; ++tau) {
    if (tau >= min_segment) {
      const double m = static_cast<double>(tau);
      const double n = total - m;
      const double between = left_distances - 2 * within_left;
      const double within_right = all_pairs - within_left - between;
      // Q = m n / T * (2 B / (m n) - W_X / C(m,2) - W_Y / C(n,2)), a side of one point having no
      // pairs and so no within term.
      double score = 2 * between / total;
      if (tau > 1) score -= 2 * n * within_left / (total * (m - 1));
      if (size - tau > 1) score -= 2 * m * within_right / (total * (n - 1));
      if (score > best.score) best = {tau, score};
    }
    const std::size_t rank = segment.ranks[tau];
    const double value = segment.sorted_values[rank];
    within_left += left.distance_sum(rank, value);
    left.insert(rank, value);
    left_distances += segment.distance_to_all[rank];
  }
  return best;
}

// Segment boundaries: the start of every segment, then the series' end.
using Boundaries = std::vector<std::size_t>;

struct Candidate {
  std::size_t index = 0;  // in the series
  double score = -std::numeric_limits<double>::infinity();
};

bool splittable(std::size_t begin, std::size_t end, std::size_t min_segment) { return end - begin >= 2 * min_segment; }

class ChangePointSearch {
 public:
  ChangePointSearch(const std::vector<double>& series, const ChangePointOptions& options)
      : series_(series), options_(options), rng_(options.seed) {}

  // Change point indices and the p-values that accepted them, in the order found.
  std::vector<std::pair<std::size_t, double>> run() {
    Boundaries boundaries{0, series_.size()};
    std::vector<std::pair<std::size_t, double>> found;
    for (;;) {
      const std::vector<RankedSegment> segments = rank_segments(boundaries);
      const Candidate candidate = best_candidate(boundaries, segments);
      if (!std::isfinite(candidate.score)) break;  // no segment left to split
      const double p_value = permutation_p_value(segments, candidate.score);
      if (p_value >= options_.alpha) break;
      found.emplace_back(candidate.index, p_value);
      boundaries.insert(std::upper_bound(boundaries.begin(), boundaries.end(), candidate.index), candidate.index);
    }
    return found;
  }

 private:
  // One entry per segment; a segment too short to split gets an empty entry.
  std::vector<RankedSegment> rank_segments(const Boundaries& boundaries) const {
    std::vector<RankedSegment> segments(boundaries.size() - 1);
    for (std::size_t s = 0; s + 1 < boundaries.size(); ++s)
      if (splittable(boundaries[s], boundaries[s + 1], options_.min_segment))
        segments[s] = rank_segment(series_, boundaries[s], boundaries[s + 1]);
    return segments;
  }

  Candidate best_candidate(const Boundaries& boundaries, const std::vector<RankedSegment>& segments) const {
    Candidate best;
    for (std::size_t s = 0; s < segments.size(); ++s) {
      if (segments[s].ranks.empty()) continue;
      const Split split = best_split(segments[s], options_.min_segment);
      if (split.score > best.score) best = {boundaries[s] + split.tau, split.score};
    }
    return best;
  }

  // Shuffles every segment's points within it and takes the best score over all segments. Stops
  // early once the split is certain to be rejected: the p-value of a rejected split is not reported.
  double permutation_p_value(std::vector<RankedSegment> segments, double observed) {
    const double trials = static_cast<double>(options_.permutations + 1);
    std::size_t at_least_observed = 0;
    for (std::size_t permutation = 0; permutation < options_.permutations; ++permutation) {
      double best = -std::numeric_limits<double>::infinity();
      for (RankedSegment& segment : segments) {
        if (segment.ranks.empty()) continue;
        fisher_yates_shuffle(segment.ranks, rng_);
        best = std::max(best, best_split(segment, options_.min_segment).score);
      }
      if (best >= observed) ++at_least_observed;
      if (static_cast<double>(at_least_observed + 1) / trials >= options_.alpha) break;
    }
    return static_cast<double>(at_least_observed + 1) / trials;
  }

  const std::vector<double>& series_;
  const ChangePointOptions& options_;
  SplitMix rng_;
};

double mean_of(const std::vector<double>& series, std::size_t begin, std::size_t end) {
  double sum = 0;
  for (std::size_t i = begin; i < end; ++i) sum += series[i];
  return sum / static_cast<double>(end - begin);
}

double relative_change(double before, double after) {
  if (before != 0) return after / before - 1;
  if (after == 0) return 0;
  return after > 0 ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity();
}

// Fills the means and relative changes from the segments between neighbouring change points.
void describe_segments(const std::vector<double>& series, std::vector<ChangePoint>& changes) {
  for (std::size_t c = 0; c < changes.size(); ++c) {
    const std::size_t begin = c == 0 ? 0 : changes[c - 1].index;
    const std::size_t end = c + 1 == changes.size() ? series.size() : changes[c + 1].index;
    changes[c].mean_before = mean_of(series, begin, changes[c].index);
    changes[c].mean_after = mean_of(series, changes[c].index, end);
    changes[c].relative_change = relative_change(changes[c].mean_before, changes[c].mean_after);
  }
}

// Drops the change points that shift the mean by less than min_relative_change, smallest first:
// dropping one merges two segments, which changes its neighbours' means, so each drop is
// followed by a recount rather than dropping all small ones at once.
void drop_small_changes(const std::vector<double>& series, double min_relative_change, std::vector<ChangePoint>& changes) {
  for (;;) {
    auto smallest = changes.end();
    for (auto it = changes.begin(); it != changes.end(); ++it)
      if (std::abs(it->relative_change) < min_relative_change &&
          (smallest == changes.end() || std::abs(it->relative_change) < std::abs(smallest->relative_change)))
        smallest = it;
    if (smallest == changes.end()) return;
    changes.erase(smallest);
    describe_segments(series, changes);
  }
}

}  // namespace

std::vector<ChangePoint> detect_change_points(const std::vector<double>& series, const ChangePointOptions& options) {
  check_options(series, options);
  if (series.size() < 2 * options.min_segment) return {};

  std::vector<ChangePoint> changes;
  for (const auto& [index, p_value] : ChangePointSearch(series, options).run()) {
    ChangePoint change;
    change.index = index;
    change.p_value = p_value;
    changes.push_back(change);
  }
  std::sort(changes.begin(), changes.end(), [](const ChangePoint& a, const ChangePoint& b) { return a.index < b.index; });
  describe_segments(series, changes);
  drop_small_changes(series, options.min_relative_change, changes);
  return changes;
}

}  // namespace ktune
