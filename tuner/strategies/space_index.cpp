#include "tuner/strategies/space_index.hpp"

#include <cstring>
#include <numeric>

namespace ktune {

SpaceIndex::SpaceIndex(const ValidConfigs& valid) : size_(valid.size()) {
  for (const Parameter& parameter : valid.parameters())
    value_counts_.push_back(static_cast<std::uint32_t>(parameter.values.size()));
  const std::size_t width = value_counts_.size();
  points_.reserve(size_ * width);
  index_of_.reserve(size_);
  for (std::size_t i = 0; i < size_; ++i) {
    for (std::size_t p = 0; p < width; ++p) points_.push_back(valid.value_index(i, p));
    index_of_.emplace(key(point(i)), i);
  }
}

GridPoint SpaceIndex::point(std::size_t i) const {
  const auto row = points_.begin() + static_cast<std::ptrdiff_t>(i * parameter_count());
  return GridPoint(row, row + static_cast<std::ptrdiff_t>(parameter_count()));
}

std::optional<std::size_t> SpaceIndex::find(const GridPoint& point) const {
  if (point.size() != parameter_count()) return std::nullopt;
  for (std::size_t p = 0; p < point.size(); ++p)
    if (point[p] >= value_counts_[p]) return std::nullopt;
  const auto found = index_of_.find(key(point));
  if (found == index_of_.end()) return std::nullopt;
  return found->second;
}

std::optional<SpaceIndex::Nearest> SpaceIndex::nearest(const GridPoint& point,
                                                       const std::function<bool(std::size_t)>& usable) const {
  std::optional<Nearest> best;
  const std::size_t width = parameter_count();
  for (std::size_t i = 0; i < size_; ++i) {
    if (!usable(i)) continue;
    std::size_t distance = 0;
    for (std::size_t p = 0; p < width; ++p) {
      const std::uint32_t a = points_[i * width + p], b = point[p];
      distance += a > b ? a - b : b - a;
    }
    if (!best || distance < best->distance) best = Nearest{i, distance};
    if (distance == 0) break;
  }
  return best;
}

std::string SpaceIndex::key(const GridPoint& point) {
  std::string bytes(point.size() * sizeof(std::uint32_t), '\0');
  std::memcpy(bytes.data(), point.data(), bytes.size());
  return bytes;
}

UnvisitedSet::UnvisitedSet(std::size_t size) : remaining_(size), position_(size) {
  std::iota(remaining_.begin(), remaining_.end(), std::size_t{0});
  std::iota(position_.begin(), position_.end(), std::size_t{0});
}

void UnvisitedSet::remove(std::size_t index) {
  const std::size_t at = position_[index];
  if (at == kVisited) return;
  const std::size_t last = remaining_.back();
  remaining_[at] = last;
  position_[last] = at;
  remaining_.pop_back();
  position_[index] = kVisited;
}

std::optional<std::size_t> take_repaired(const SpaceIndex& space, UnvisitedSet& unvisited, const GridPoint& point,
                                         std::size_t max_distance, SplitMix& rng) {
  if (const auto index = space.find(point); index && unvisited.contains(*index)) {
    unvisited.remove(*index);
    return index;
  }
  const auto near = space.nearest(point, [&unvisited](std::size_t i) { return unvisited.contains(i); });
  if (!near) return std::nullopt;  // everything visited
  if (near->distance > max_distance) return unvisited.take_random(rng);
  unvisited.remove(near->index);
  return near->index;
}

}  // namespace ktune
