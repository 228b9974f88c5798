#include "tuner/strategies/model_candidates.hpp"

#include <algorithm>

#include "tuner/strategies/space_filling.hpp"

namespace ktune {
namespace {

// Start-up configs are spread out: each the farthest from those already taken among this many
// random unvisited ones. Enough to avoid near-duplicates and to reach every code path of a GEMM
// space early, few enough to stay clear of the space's corners (reports/search.md).
constexpr std::size_t kSpreadCandidates = 64;
// Past this many configs handed out (only when nothing succeeds for that long) plain random
// sampling: the spread's cost grows with every config taken, and it no longer chooses between
// regions.
constexpr std::size_t kMaximumSpreadReference = 256;
// Candidates per proposal on bigger spaces: a random sample of the unvisited configs, where the
// model can find a region it has not tried, plus the unvisited neighbours of the best configs,
// where it can refine one it has.
constexpr std::size_t kRandomCandidates = 512;
constexpr std::size_t kIncumbents = 4;

}  // namespace

std::size_t take_start_up_config(const SpaceIndex& space, UnvisitedSet& unvisited, std::vector<std::size_t>& handed_out,
                                 SplitMix& rng) {
  const std::size_t candidates = handed_out.size() < kMaximumSpreadReference ? kSpreadCandidates : 1;
  const std::size_t index = take_spread_out(space, unvisited, handed_out, candidates, rng);
  handed_out.push_back(index);
  return index;
}

std::vector<std::size_t> model_candidates(const SpaceIndex& space, const UnvisitedSet& unvisited,
                                          const std::vector<ScoredConfig>& observed, SplitMix& rng) {
  std::vector<std::size_t> chosen;
  if (unvisited.count() <= kRandomCandidates) {
    for (std::size_t i = 0; i < space.size(); ++i)
      if (unvisited.contains(i)) chosen.push_back(i);
    return chosen;
  }
  for (std::size_t k = 0; k < kRandomCandidates; ++k) chosen.push_back(unvisited.peek_random(rng));
  std::vector<ScoredConfig> best = observed;
  const std::size_t incumbents = std::min(kIncumbents, best.size());
  std::partial_sort(best.begin(), best.begin() + static_cast<std::ptrdiff_t>(incumbents), best.end(), faster);
  for (std::size_t b = 0; b < incumbents; ++b) {
    GridPoint point = space.point(best[b].index);
    for (std::size_t p = 0; p < point.size(); ++p) {
      for (const int step : {-1, 1}) {
        const std::uint32_t original = point[p];
        if (step < 0 && original == 0) continue;
        point[p] = original + static_cast<std::uint32_t>(step);
        if (const auto index = space.find(point); index && unvisited.contains(*index)) chosen.push_back(*index);
        point[p] = original;
      }
    }
  }
  return chosen;
}

}  // namespace ktune
