#include "tuner/strategies/space_filling.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ktune {

double spread_distance(const SpaceIndex& space, std::size_t a, std::size_t b) {
  double sum = 0;
  for (std::size_t p = 0; p < space.parameter_count(); ++p) {
    if (space.value_count(p) < 2) continue;
    const double steps = static_cast<double>(space.value_count(p) - 1);
    sum += std::abs(static_cast<double>(space.coordinate(a, p)) - static_cast<double>(space.coordinate(b, p))) / steps;
  }
  return sum;
}

std::size_t take_spread_out(const SpaceIndex& space, UnvisitedSet& unvisited, const std::vector<std::size_t>& taken,
                            std::size_t candidates, SplitMix& rng) {
  if (taken.empty() || candidates < 2) return *unvisited.take_random(rng);
  std::size_t best = 0;
  double best_distance = -1;
  for (std::size_t k = 0; k < candidates; ++k) {
    const std::size_t candidate = unvisited.peek_random(rng);
    double nearest = std::numeric_limits<double>::infinity();
    for (const std::size_t other : taken) nearest = std::min(nearest, spread_distance(space, candidate, other));
    if (nearest > best_distance) {
      best_distance = nearest;
      best = candidate;
    }
  }
  unvisited.remove(best);
  return best;
}

}  // namespace ktune
