// covering_sample: every pair of values that valid configs hold is held by a chosen config, the
// choice is much smaller than the space and depends on the seed only.
#include <gtest/gtest.h>

#include <set>
#include <tuple>

#include "tuner/core/search_space.hpp"
#include "tuner/tune/covering_sample.hpp"

namespace ktune {
namespace {

SearchSpace space() {
  return SearchSpace::from_json(nlohmann::json::parse(R"({
    "family": "example", "backend": "cuda",
    "parameters": [
      {"name": "block", "values": [32, 64, 128, 256, 512, 1024]},
      {"name": "vector", "values": [1, 2, 4, 8]},
      {"name": "unroll", "values": [1, 2, 4, 8]},
      {"name": "storage", "values": ["registers", "shared"]},
      {"name": "grid", "values": [0, 1, 2, 4], "launch_only": true}
    ],
    "constraints": [{"expr": "block * vector <= 2048"}, {"expr": "storage == \"shared\" or unroll <= 4"}]
  })"),
                                "test space");
}

using Pair = std::tuple<std::size_t, std::uint32_t, std::size_t, std::uint32_t>;

std::set<Pair> pairs(const ValidConfigs& valid, const std::vector<std::size_t>& indices, std::size_t parameters) {
  std::set<Pair> out;
  for (std::size_t i : indices)
    for (std::size_t a = 0; a < parameters; ++a)
      for (std::size_t b = a; b < parameters; ++b)
        out.emplace(a, valid.value_index(i, a), b, valid.value_index(i, b));
  return out;
}

TEST(CoveringSample, HoldsEveryPairOfTheValidConfigsInFewConfigs) {
  const SearchSpace s = space();
  const ValidConfigs valid = s.enumerate({});
  std::vector<std::size_t> all(valid.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  const auto chosen = covering_sample(valid, 7, s.launch_only_names());
  // Pairs over the four parameters the kernel reads (grid is launch-only, the last one).
  EXPECT_EQ(pairs(valid, chosen, 4), pairs(valid, all, 4));
  EXPECT_LT(chosen.size(), valid.size() / 4) << chosen.size() << " of " << valid.size();
  EXPECT_GT(chosen.size(), 0u);
  for (std::size_t i : chosen) EXPECT_LT(i, valid.size());
  EXPECT_EQ(std::set<std::size_t>(chosen.begin(), chosen.end()).size(), chosen.size());  // no repeats
}

TEST(CoveringSample, TheSeedAloneDecides) {
  const SearchSpace s = space();
  const ValidConfigs valid = s.enumerate({});
  EXPECT_EQ(covering_sample(valid, 3), covering_sample(valid, 3));
  EXPECT_NE(covering_sample(valid, 3), covering_sample(valid, 4));
  // With the launch-only parameter counted too, its values are covered as well.
  const auto with_grid = covering_sample(valid, 3);
  EXPECT_EQ(pairs(valid, with_grid, 5), pairs(valid, [&] {
              std::vector<std::size_t> all(valid.size());
              for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
              return all;
            }(), 5));
}

}  // namespace
}  // namespace ktune
