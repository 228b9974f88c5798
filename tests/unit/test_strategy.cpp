// Search strategies: coverage, no repeats, determinism per seed.
#include <gtest/gtest.h>

#include <set>

#include "tuner/core/errors.hpp"
#include "tuner/strategies/strategy.hpp"

namespace ktune {
namespace {

std::vector<std::size_t> drain(Strategy& strategy) {
  std::vector<std::size_t> order;
  while (auto index = strategy.next()) order.push_back(*index);
  return order;
}

TEST(Strategy, BruteForceVisitsInOrder) {
  auto strategy = make_strategy("brute_force", 5, 1);
  EXPECT_EQ(drain(*strategy), (std::vector<std::size_t>{0, 1, 2, 3, 4}));
}

TEST(Strategy, RandomIsAPermutationWithoutRepeats) {
  auto strategy = make_strategy("random", 1000, 42);
  const auto order = drain(*strategy);
  ASSERT_EQ(order.size(), 1000u);
  EXPECT_EQ(std::set<std::size_t>(order.begin(), order.end()).size(), 1000u);
  std::vector<std::size_t> sorted_prefix(order.begin(), order.begin() + 20);
  EXPECT_FALSE(std::is_sorted(sorted_prefix.begin(), sorted_prefix.end()));
}

TEST(Strategy, RandomIsDeterministicPerSeed) {
  auto a = make_strategy("random", 200, 7);
  auto b = make_strategy("random", 200, 7);
  auto c = make_strategy("random", 200, 8);
  const auto order_a = drain(*a);
  EXPECT_EQ(order_a, drain(*b));
  EXPECT_NE(order_a, drain(*c));
}

TEST(Strategy, EmptySpaceAndUnknownName) {
  EXPECT_FALSE(make_strategy("random", 0, 1)->next().has_value());
  try {
    make_strategy("simplex", 10, 1);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("annealing, auto, brute_force, differential_evolution, forest, genetic, random, tpe"), std::string::npos) << e.what();
  }
  // The neighbourhood strategies need the space's structure, not only its size.
  EXPECT_THROW(make_strategy("annealing", 10, 1), InputError);
}

}  // namespace
}  // namespace ktune
