#include "tuner/strategies/strategy.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "tuner/core/errors.hpp"
#include "tuner/core/search_space.hpp"
#include "tuner/strategies/annealing.hpp"
#include "tuner/strategies/differential_evolution.hpp"
#include "tuner/strategies/forest_search.hpp"
#include "tuner/strategies/genetic.hpp"
#include "tuner/strategies/prior_configs.hpp"
#include "tuner/strategies/space_index.hpp"
#include "tuner/strategies/tree_parzen.hpp"

namespace ktune {

double objective_ns(const EvaluationResult& result) {
  const bool ok = result.outcome == Outcome::ok && std::isfinite(result.stats.median_ns);
  return ok ? result.stats.median_ns : std::numeric_limits<double>::infinity();
}

void replace_slowest_if_faster(std::vector<ScoredConfig>& population, const ScoredConfig& candidate) {
  const auto slowest = std::max_element(population.begin(), population.end(), faster);
  if (slowest != population.end() && faster(candidate, *slowest)) *slowest = candidate;
}

std::optional<std::size_t> BruteForce::propose() {
  if (cursor_ >= size_) return std::nullopt;
  return cursor_++;
}

RandomSampling::RandomSampling(std::size_t size, std::uint64_t seed) : order_(size), rng_(seed) {
  std::iota(order_.begin(), order_.end(), std::size_t{0});
}

std::optional<std::size_t> RandomSampling::propose() {
  if (drawn_ >= order_.size()) return std::nullopt;
  // One Fisher-Yates step per proposal.
  const std::size_t pick = drawn_ + rng_.below(order_.size() - drawn_);
  std::swap(order_[drawn_], order_[pick]);
  return order_[drawn_++];
}

std::vector<std::string> strategy_names() {
  return {"annealing", "auto", "brute_force", "differential_evolution", "forest", "genetic", "random", "tpe"};
}

std::string resolve_strategy(const std::string& name, std::size_t prior_configs_valid) {
  if (name != "auto") return name;
  return prior_configs_valid > 0 ? "tpe" : "forest";
}

std::string resolve_strategy(const std::string& name, const ValidConfigs& valid, const std::vector<Config>& prior) {
  if (name != "auto" || prior.empty()) return resolve_strategy(name, std::size_t{0});
  return resolve_strategy(name, PriorQueue(SpaceIndex(valid), valid, prior).size());
}

void check_strategy_name(const std::string& name) {
  const auto names = strategy_names();
  if (std::find(names.begin(), names.end(), name) == names.end())
    throw InputError("--strategy: unknown strategy '" + name + "'; valid strategies: " + join_names(names));
}

std::unique_ptr<Strategy> make_strategy(const std::string& name, const ValidConfigs& valid, const StrategyOptions& options) {
  if (name == "auto") return make_strategy(resolve_strategy(name, valid, options.prior), valid, options);
  const std::uint64_t seed = options.seed;
  if (name == "annealing") return std::make_unique<SimulatedAnnealing>(valid, seed);
  if (name == "genetic") return std::make_unique<GeneticAlgorithm>(valid, seed);
  if (name == "differential_evolution") return std::make_unique<DifferentialEvolution>(valid, seed);
  if (name == "forest") return std::make_unique<ForestSearch>(valid, seed, options.budget, options.prior);
  if (name == "tpe") return std::make_unique<TreeParzen>(valid, seed, options.budget, options.prior);
  return make_strategy(name, valid.size(), seed);
}

std::unique_ptr<Strategy> make_strategy(const std::string& name, const ValidConfigs& valid, std::uint64_t seed) {
  return make_strategy(name, valid, StrategyOptions{.seed = seed, .budget = std::nullopt, .prior = {}});
}

std::unique_ptr<Strategy> make_strategy(const std::string& name, std::size_t size, std::uint64_t seed) {
  check_strategy_name(name);
  if (name == "brute_force") return std::make_unique<BruteForce>(size);
  if (name == "random") return std::make_unique<RandomSampling>(size, seed);
  throw InputError("strategy '" + name + "' needs the parameters of the space, not only its size");
}

}  // namespace ktune
