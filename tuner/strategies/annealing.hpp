// Simulated annealing over the valid configs. The walk moves to a neighbour: a valid config that
// differs in one parameter, by one step in that parameter's value list (any other value of it
// when no adjacent one is left). A worse neighbour is accepted with probability
// exp(-delta / T), where delta is the difference of the normalised objective (median time
// relative to the best time seen so far, so T reads as "a fraction slower than the best") and T
// cools geometrically. A walk that finds no unvisited neighbour, or stops improving, restarts
// from a random unvisited config at the starting temperature.
//
// Never proposes an index twice (observed indices it did not propose count as visited too);
// nullopt once every config has been visited. A failed config (outcome other than ok) costs
// infinitely much: the walk never moves onto one, but it can leave one it started on.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>

#include "tuner/core/search_space.hpp"
#include "tuner/core/split_mix.hpp"
#include "tuner/strategies/space_index.hpp"
#include "tuner/strategies/strategy.hpp"

namespace ktune {

class SimulatedAnnealing final : public Strategy {
 public:
  SimulatedAnnealing(const ValidConfigs& valid, std::uint64_t seed);

 private:
  std::optional<std::size_t> propose() override;
  void learn(std::size_t index, const EvaluationResult& result) override;

  std::optional<std::size_t> unvisited_neighbour();
  std::optional<std::size_t> start_new_walk();
  double normalised(double time_ns) const;

  static constexpr double kInfinity = std::numeric_limits<double>::infinity();

  SpaceIndex space_;
  UnvisitedSet unvisited_;
  SplitMix rng_;
  std::optional<std::size_t> current_;      // where the walk stands, once its start is observed
  double current_ns_ = kInfinity;
  std::optional<std::size_t> next_start_;   // proposed as the start of a new walk, not yet observed
  bool restart_requested_ = false;
  double best_ns_ = kInfinity;              // over every observation: the objective's scale
  double walk_best_ns_ = kInfinity;
  std::size_t observations_without_progress_ = 0;
  double temperature_;
};

}  // namespace ktune
