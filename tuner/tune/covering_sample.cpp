#include "tuner/tune/covering_sample.hpp"

#include <algorithm>
#include <numeric>
#include <random>
#include <set>
#include <tuple>

namespace ktune {

std::vector<std::size_t> covering_sample(const ValidConfigs& valid, std::uint64_t seed,
                                         const std::vector<std::string>& ignored) {
  std::vector<std::size_t> parameters;
  for (std::size_t p = 0; p < valid.parameters().size(); ++p)
    if (std::find(ignored.begin(), ignored.end(), valid.parameters()[p].name) == ignored.end()) parameters.push_back(p);
  // A pair (p, value of p, q, value of q), p < q; a single parameter counts as a pair with itself.
  using Pair = std::tuple<std::size_t, std::uint32_t, std::size_t, std::uint32_t>;
  auto pairs_of = [&](std::size_t i) {
    std::vector<Pair> out;
    for (std::size_t a = 0; a < parameters.size(); ++a)
      for (std::size_t b = a; b < parameters.size(); ++b)
        out.emplace_back(parameters[a], valid.value_index(i, parameters[a]), parameters[b],
                         valid.value_index(i, parameters[b]));
    return out;
  };
  std::vector<std::size_t> order(valid.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::mt19937_64 rng(seed);
  std::shuffle(order.begin(), order.end(), rng);
  // Greedy in the shuffled order: keep a config when it holds a pair no kept config holds. One
  // pass suffices: every pair that occurs is held by some config, which is kept unless an earlier
  // kept config already holds that pair.
  std::set<Pair> covered;
  std::vector<std::size_t> chosen;
  for (std::size_t i : order) {
    bool adds = false;
    for (const Pair& pair : pairs_of(i)) adds |= covered.insert(pair).second;
    if (adds) chosen.push_back(i);
  }
  return chosen;
}

}  // namespace ktune
