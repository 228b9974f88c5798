// The valid configs of a space as points of a grid, for strategies that move between
// neighbours: config i sits at coordinate(i, p) (the index of its value in parameter p's value
// list) and find() maps a point back to its config in constant time.
//
// Strategies work on value indices rather than values: "adjacent value" is then simply +-1, and
// ValidConfigs (from a search space or a Kernel Tuner cache, see replay.hpp) already stores its
// configs that way. ValidConfigs::find takes a Config and searches linearly, too slow for a
// strategy that tests thousands of candidate points, hence the hash map here.
//
//   SpaceIndex index(valid);
//   std::vector<std::uint32_t> point = index.point(i);
//   point[p] += 1;
//   if (auto j = index.find(point)) ...   // the valid config one value further in parameter p
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "tuner/core/search_space.hpp"
#include "tuner/core/split_mix.hpp"

namespace ktune {

using GridPoint = std::vector<std::uint32_t>;

class SpaceIndex {
 public:
  explicit SpaceIndex(const ValidConfigs& valid);

  std::size_t size() const { return size_; }
  std::size_t parameter_count() const { return value_counts_.size(); }
  std::uint32_t value_count(std::size_t p) const { return value_counts_[p]; }
  std::uint32_t coordinate(std::size_t i, std::size_t p) const { return points_[i * parameter_count() + p]; }
  GridPoint point(std::size_t i) const;

  // The valid config at this point; nullopt when the point is not a valid config (including a
  // coordinate past the end of its value list).
  std::optional<std::size_t> find(const GridPoint& point) const;

  // Of the configs `usable` accepts, one nearest to `point` (L1 distance in value indices; the
  // lowest index among equals) with its distance; nullopt when `usable` accepts none.
  struct Nearest {
    std::size_t index;
    std::size_t distance;
  };
  std::optional<Nearest> nearest(const GridPoint& point, const std::function<bool(std::size_t)>& usable) const;

 private:
  static std::string key(const GridPoint& point);

  std::size_t size_;
  std::vector<std::uint32_t> value_counts_;
  std::vector<std::uint32_t> points_;  // size_ rows of parameter_count() coordinates
  std::unordered_map<std::string, std::size_t> index_of_;
};

// Indices not yet handed out, with constant-time removal and uniform random choice. Strategies
// mark every index they propose (or hear about) here, which is how none is proposed twice.
class UnvisitedSet {
 public:
  explicit UnvisitedSet(std::size_t size);
  bool contains(std::size_t index) const { return position_[index] != kVisited; }
  bool empty() const { return remaining_.empty(); }
  std::size_t count() const { return remaining_.size(); }
  void remove(std::size_t index);
  // A uniformly chosen unvisited index, left in the set; the set must not be empty.
  template <typename Generator>
  std::size_t peek_random(Generator& rng) const {
    return remaining_[rng.below(remaining_.size())];
  }
  // A uniformly chosen unvisited index, removed; nullopt when none is left.
  template <typename Generator>
  std::optional<std::size_t> take_random(Generator& rng) {
    if (remaining_.empty()) return std::nullopt;
    const std::size_t index = remaining_[rng.below(remaining_.size())];
    remove(index);
    return index;
  }

 private:
  static constexpr std::size_t kVisited = static_cast<std::size_t>(-1);
  std::vector<std::size_t> remaining_;
  std::vector<std::size_t> position_;  // where each index sits in remaining_, or kVisited
};

// How the genetic algorithm and differential evolution turn a proposed grid point into a config:
// the valid config at `point` when it is unvisited, else the nearest unvisited one when it is at
// most `max_distance` value steps away, else a random unvisited one (a point far from every
// unvisited config would pull the search into a corner). The result is taken out of `unvisited`;
// nullopt once everything is visited.
std::optional<std::size_t> take_repaired(const SpaceIndex& space, UnvisitedSet& unvisited, const GridPoint& point,
                                         std::size_t max_distance, SplitMix& rng);

}  // namespace ktune
