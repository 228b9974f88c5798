// A space-filling pick for the first configs of a search: of a few random unvisited configs, the
// one farthest from every config already taken (Mitchell's best-candidate sampling, a cheap
// approximation of a maximin design).
//
// Why not plain random sampling: with a budget of a handful of configs, random picks often land
// on near-duplicates and leave a whole region unseen. On spaces where one parameter picks a code
// path (SIMT against tensor cores in a GEMM), a start that never samples the fast path can lead
// a model-based search astray for the whole budget; spreading the start makes that rare.
// Why only a few candidates, not the farthest of all: the farthest configs of a space are its
// corners (the smallest and largest block sizes at once), rarely the fast ones; a few candidates
// keep the picks random but spread.
//
//   std::vector<std::size_t> taken;
//   const std::size_t index = take_spread_out(space, unvisited, taken, rng);
//   taken.push_back(index);
#pragma once

#include <cstddef>
#include <vector>

#include "tuner/core/split_mix.hpp"
#include "tuner/strategies/space_index.hpp"

namespace ktune {

// Distance between two configs for spreading them out: the sum over parameters of the value-index
// difference divided by the parameter's number of steps, so that every parameter spans 0 to 1
// whatever the length of its value list (a yes/no flag weighs as much as a block size).
double spread_distance(const SpaceIndex& space, std::size_t a, std::size_t b);

// Of `candidates` random unvisited configs, the one whose nearest config in `taken` is farthest
// (a random one when `taken` is empty); taken out of `unvisited`. The space must have an
// unvisited config.
std::size_t take_spread_out(const SpaceIndex& space, UnvisitedSet& unvisited, const std::vector<std::size_t>& taken,
                            std::size_t candidates, SplitMix& rng);

}  // namespace ktune
