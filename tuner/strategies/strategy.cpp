#include "tuner/strategies/strategy.hpp"

#include <numeric>
#include <random>

#include "tuner/core/errors.hpp"

namespace ktune {

std::optional<std::size_t> BruteForce::propose() {
  if (cursor_ >= size_) return std::nullopt;
  return cursor_++;
}

RandomSampling::RandomSampling(std::size_t size, std::uint64_t seed) : order_(size), state_(seed) {
  std::iota(order_.begin(), order_.end(), std::size_t{0});
}

std::optional<std::size_t> RandomSampling::propose() {
  if (drawn_ >= order_.size()) return std::nullopt;
  // One Fisher-Yates step per proposal. splitmix64 keeps the sequence identical across
  // platforms and standard libraries for a given seed (std::uniform_int_distribution is not).
  state_ += 0x9e3779b97f4a7c15ull;
  std::uint64_t z = state_;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  const std::size_t remaining = order_.size() - drawn_;
  const std::size_t pick = drawn_ + static_cast<std::size_t>(z % remaining);
  std::swap(order_[drawn_], order_[pick]);
  return order_[drawn_++];
}

std::vector<std::string> strategy_names() { return {"brute_force", "random"}; }

std::unique_ptr<Strategy> make_strategy(const std::string& name, std::size_t size, std::uint64_t seed) {
  if (name == "brute_force") return std::make_unique<BruteForce>(size);
  if (name == "random") return std::make_unique<RandomSampling>(size, seed);
  throw InputError("--strategy: unknown strategy '" + name + "'; valid strategies: " + join_names(strategy_names()));
}

}  // namespace ktune
