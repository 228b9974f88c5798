#include "tuner/strategies/annealing.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

namespace ktune {
namespace {

// A neighbour 5% slower than the current config starts out accepted with probability 1/e:
// recorded GPU spaces are often flat near their optimum (on dedispersion the fastest 5% of
// configs lie within 1.5% of the optimum), and a hotter start wanders there at random.
constexpr double kStartTemperature = 0.05;
// Per observation: after ~45 observations T is a tenth of the start, and the walk is greedy.
constexpr double kCooling = 0.95;
// Observations without a new best of the walk before it restarts elsewhere.
constexpr std::size_t kPatience = 20;

template <typename Generator>
std::vector<std::size_t> shuffled_range(std::size_t count, Generator& rng) {
  std::vector<std::size_t> order(count);
  std::iota(order.begin(), order.end(), std::size_t{0});
  for (std::size_t i = count; i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);
  return order;
}

}  // namespace

SimulatedAnnealing::SimulatedAnnealing(const ValidConfigs& valid, std::uint64_t seed)
    : space_(valid), unvisited_(valid.size()), rng_(seed), temperature_(kStartTemperature) {}

std::optional<std::size_t> SimulatedAnnealing::propose() {
  if (!current_ || restart_requested_) return start_new_walk();
  if (const auto neighbour = unvisited_neighbour()) return neighbour;
  return start_new_walk();  // every neighbour visited: stuck here
}

std::optional<std::size_t> SimulatedAnnealing::start_new_walk() {
  restart_requested_ = false;
  next_start_ = unvisited_.take_random(rng_);
  return next_start_;
}

std::optional<std::size_t> SimulatedAnnealing::unvisited_neighbour() {
  const GridPoint here = space_.point(*current_);
  const auto parameters = shuffled_range(space_.parameter_count(), rng_);
  // Adjacent values first: the small step the schedule is tuned for.
  for (const std::size_t p : parameters) {
    const bool up_first = rng_.below(2) == 0;
    for (const int step : {up_first ? 1 : -1, up_first ? -1 : 1}) {
      if (step < 0 && here[p] == 0) continue;
      GridPoint there = here;
      there[p] += step;
      if (const auto index = space_.find(there); index && unvisited_.contains(*index)) {
        unvisited_.remove(*index);
        return index;
      }
    }
  }
  // Then any value of one parameter, e.g. across a gap that constraints cut into a value list.
  for (const std::size_t p : parameters) {
    for (const std::size_t value : shuffled_range(space_.value_count(p), rng_)) {
      GridPoint there = here;
      there[p] = static_cast<std::uint32_t>(value);
      if (const auto index = space_.find(there); index && unvisited_.contains(*index)) {
        unvisited_.remove(*index);
        return index;
      }
    }
  }
  return std::nullopt;
}

double SimulatedAnnealing::normalised(double time_ns) const {
  return std::isfinite(best_ns_) && best_ns_ > 0 ? time_ns / best_ns_ : time_ns;
}

void SimulatedAnnealing::learn(std::size_t index, const EvaluationResult& result) {
  if (index >= space_.size()) return;
  unvisited_.remove(index);  // the tune loop may evaluate configs it did not get from here
  const double time_ns = objective_ns(result);
  best_ns_ = std::min(best_ns_, time_ns);

  if (!current_ || index == next_start_) {
    current_ = index;
    current_ns_ = time_ns;
    next_start_.reset();
    walk_best_ns_ = time_ns;
    observations_without_progress_ = 0;
    temperature_ = kStartTemperature;
    return;
  }

  // A failed current config is left for anything; a failed neighbour is never moved onto.
  bool accept = !std::isfinite(current_ns_);
  if (!accept && std::isfinite(time_ns)) {
    const double delta = normalised(time_ns) - normalised(current_ns_);
    accept = delta <= 0 || rng_.uniform() < std::exp(-delta / temperature_);
  }
  if (accept) {
    current_ = index;
    current_ns_ = time_ns;
  }
  temperature_ *= kCooling;

  if (time_ns < walk_best_ns_) {
    walk_best_ns_ = time_ns;
    observations_without_progress_ = 0;
  } else if (++observations_without_progress_ >= kPatience) {
    restart_requested_ = true;
  }
}

}  // namespace ktune
