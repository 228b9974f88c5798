// A search strategy proposes which config of the valid space to evaluate next and hears back
// how each went. Budgets and time limits are enforced by the tune loop, not by strategies.
//
//   auto strategy = make_strategy("annealing", valid_configs, StrategyOptions{.seed = 1, .budget = 200});
//   while (auto index = strategy->next()) { ...; strategy->observe(*index, result); }
//
// next() may be called several times before the results come back (the tune loop compiles
// ahead), and observe() may report an index the strategy did not propose (the family's default
// goes first); every strategy copes with both.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tuner/core/config.hpp"
#include "tuner/core/split_mix.hpp"
#include "tuner/measure/evaluation.hpp"

namespace ktune {

class ValidConfigs;

// A visited config and what it cost: the median time, infinite for a config that failed (so it
// loses every comparison). The population and model strategies keep their observations so.
struct ScoredConfig {
  std::size_t index;
  double time_ns;
};
double objective_ns(const EvaluationResult& result);
inline bool faster(const ScoredConfig& a, const ScoredConfig& b) { return a.time_ns < b.time_ns; }
// Steady-state replacement: `candidate` takes the place of the slowest member when it is faster.
void replace_slowest_if_faster(std::vector<ScoredConfig>& population, const ScoredConfig& candidate);

class Strategy {
 public:
  virtual ~Strategy() = default;
  // The next index into the valid configs, or nullopt when the strategy has nothing more.
  std::optional<std::size_t> next() { return propose(); }
  void observe(std::size_t index, const EvaluationResult& result) { learn(index, result); }
  // False when what it proposes never depends on what it observed (brute force, random
  // sampling): such a tune may keep a config waiting at each device without changing which
  // configs a resumed tune proposes.
  virtual bool learns() const { return true; }

 private:
  virtual std::optional<std::size_t> propose() = 0;
  virtual void learn(std::size_t, const EvaluationResult&) {}
};

// Every index once, in enumeration order.
class BruteForce final : public Strategy {
 public:
  explicit BruteForce(std::size_t size) : size_(size) {}
  bool learns() const override { return false; }

 private:
  std::optional<std::size_t> propose() override;
  std::size_t size_;
  std::size_t cursor_ = 0;
};

// Uniform sampling without replacement (a lazily drawn Fisher-Yates permutation), seeded.
class RandomSampling final : public Strategy {
 public:
  RandomSampling(std::size_t size, std::uint64_t seed);
  bool learns() const override { return false; }

 private:
  std::optional<std::size_t> propose() override;
  std::vector<std::size_t> order_;
  std::size_t drawn_ = 0;
  SplitMix rng_;
};

// The strategy `ktune tune` and `ktune replay` use unless told otherwise: "auto", which is
// resolve_strategy's choice between the two best in replay (reports/search.md has the tables).
inline constexpr const char* kDefaultStrategy = "auto";

// What a strategy may be told about the tune it serves, beyond the space itself.
struct StrategyOptions {
  std::uint64_t seed = 1;
  // How many configs the tune will evaluate at most, when that is known (`ktune tune --budget`,
  // `ktune replay`); nullopt when only a time limit bounds it. A model-based strategy plans its
  // exploration for it: a budget of 10 configs cannot afford 10 random ones before the model.
  // The strategy must still work past it and without it.
  std::optional<std::size_t> budget;
  // Configs that were fast on other spaces of the same kernel (earlier tunes on other devices or
  // shapes), then of other kernels with the same parameters, best first (prior_configs.hpp). The
  // model-based strategies (tpe, forest) evaluate those valid here first, in part of their
  // start-up; the others ignore it. Empty: no transfer.
  std::vector<Config> prior;
};

std::vector<std::string> strategy_names();
// The strategy a name stands for in this space: "auto" is tpe when the prior holds a config
// valid here and forest otherwise; any other name is itself. From scratch forest scored best at
// 2% (the shared spaces; level with tpe on the 4000-config matmuls). With a prior of earlier
// tunes tpe led at 2% on the development spaces and on held-out sets b, c and d (d was scored
// before the choice), though it trails at 5%; with starting points alone the two were level on
// the development spaces and tpe led on set d (reports/search.md, 2026-11-26 third session).
std::string resolve_strategy(const std::string& name, const ValidConfigs& valid, const std::vector<Config>& prior);
// The same from the number of prior configs valid here, for callers that counted them already
// (matching a prior against a large space is not free).
std::string resolve_strategy(const std::string& name, std::size_t prior_configs_valid);
// InputError listing the valid names for an unknown strategy.
void check_strategy_name(const std::string& name);
// Any strategy ("auto" resolved as above): annealing and genetic move between neighbouring
// configs, so they need the parameters and value indices of the valid configs, not just their
// count.
std::unique_ptr<Strategy> make_strategy(const std::string& name, const ValidConfigs& valid, const StrategyOptions& options);
// The same without a budget.
std::unique_ptr<Strategy> make_strategy(const std::string& name, const ValidConfigs& valid, std::uint64_t seed);
// Only the strategies that need nothing but the size (brute_force, random); InputError for
// the others.
std::unique_ptr<Strategy> make_strategy(const std::string& name, std::size_t size, std::uint64_t seed);

}  // namespace ktune
