// What the model-based strategies (tpe, forest) share: the spread-out start-up configs before a
// model has anything to learn from, and the candidates a model chooses its next proposal from.
//
// Candidates come from the valid configs themselves (all unvisited ones, or a random sample of
// them on big spaces, plus the unvisited neighbours of the fastest configs so far), so
// constraints are respected without any repair step, and the model only has to rank them.
//
//   std::vector<std::size_t> handed_out;
//   const std::size_t first = take_start_up_config(space, unvisited, handed_out, rng);
//   for (const std::size_t index : model_candidates(space, unvisited, observed, rng)) ...
#pragma once

#include <cstddef>
#include <vector>

#include "tuner/core/split_mix.hpp"
#include "tuner/strategies/space_index.hpp"
#include "tuner/strategies/strategy.hpp"

namespace ktune {

// A start-up config, spread out from every config in `handed_out` (space_filling.hpp), taken out
// of `unvisited` and appended to `handed_out`. The space must have an unvisited config.
std::size_t take_start_up_config(const SpaceIndex& space, UnvisitedSet& unvisited, std::vector<std::size_t>& handed_out,
                                 SplitMix& rng);

// Every unvisited config when few are left; otherwise a random sample of them (repeats
// possible) followed by the unvisited neighbours (one value step in one parameter) of the
// fastest observations. Never a visited config; empty only when every config is visited.
std::vector<std::size_t> model_candidates(const SpaceIndex& space, const UnvisitedSet& unvisited,
                                          const std::vector<ScoredConfig>& observed, SplitMix& rng);

}  // namespace ktune
