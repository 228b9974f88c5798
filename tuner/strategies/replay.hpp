// Offline replay: runs a strategy against the recorded times of a fully measured space (a
// Kernel Tuner cache) instead of a GPU, and scores it the way the auto-tuning methodology
// literature does (Willemsen et al., FGCS 2024):
//
//   score = (strategy - random) / (optimum - random)
//
// on the best time found within a budget of evaluations, where "random" is the expected best of
// random sampling without replacement with the same budget: 0 is no better than random, 1 is
// always the optimum.
//
//   const ReplaySpace space = load_replay_space("convolution_A100.json.gz");  // a cache or T4 results
//   const StrategyScore s = score_strategy(space, "annealing", /*budget=*/200, /*repeats=*/20, /*first_seed=*/1);
//
// The cache's records become a ValidConfigs directly (its tune_params are the parameters, each
// record a row of value indices), so the strategies run on exactly the interface the tune loop
// gives them; no separate "space view" is needed.
//
// A failed record (compile or runtime failure) is a failed config for the strategy. For scoring,
// a budget that found no successful config counts as the slowest successful time of the space,
// for the strategy and the random baseline alike.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tuner/core/search_space.hpp"
#include "tuner/formats/kernel_tuner_cache.hpp"
#include "tuner/formats/t4_results.hpp"
#include "tuner/measure/evaluation.hpp"
#include "tuner/strategies/strategy.hpp"

namespace ktune {

struct ReplaySpace {
  std::string kernel;                          // as the file names it ("" when it does not)
  std::string device;
  ValidConfigs valid;                          // one config per record, in file order
  std::vector<std::string> keys;               // per config, its Kernel Tuner key "v1,v2,..."
  std::vector<std::optional<double>> time_ms;  // per config; nullopt for a failed record
  std::vector<std::optional<KernelTunerFailure>> failure;
  std::vector<double> problem_size;  // the file's numeric problem_size entries (caches; empty for T4)
  // The valid configs of the whole space the file was recorded from, when the file says
  // (kSpaceConfigsMember: ktune's recordings); Kernel Tuner's caches do not, as their
  // restrictions are not in the file.
  std::optional<std::uint64_t> space_configs;

  // What evaluating config `index` gave when the space was measured.
  EvaluationResult recorded_result(std::size_t index) const;
  // Per config, the time scoring uses: failures take the slowest successful time.
  std::vector<double> scoring_times_ms() const;
};

// InputError when a record's value is not in its parameter's list or no record succeeded.
ReplaySpace replay_space(const KernelTunerCache& cache);
// T4 results as a space: each parameter's values are those the results hold, in ascending order
// (strategies step between adjacent values); the objective is the "time" measurement, and a
// result marked invalid is a failed config. InputError when a result lacks a parameter.
ReplaySpace replay_space(const T4Results& results);
// Either format, told apart by content.
ReplaySpace load_replay_space(const std::filesystem::path& file);

// Recorded spaces smaller than this score strategies on too few evaluations to tell them apart:
// at the default budget, 5% of the space, 100 configs give 5 evaluations, 3 of which are the
// smallest start-up forest and tpe spread out before their model (model_based_strategy.cpp);
// fewer leave the model one proposal or none, so a score measures the start-up's luck.
constexpr std::size_t kMinReplayConfigs = 100;

// What part of its space a recorded file covers, and why its scores may mislead.
struct ReplayCoverage {
  std::size_t recorded = 0;            // configs the file records
  std::optional<std::uint64_t> space;  // valid configs of the whole space, when the file says
  std::string warning;                 // empty when neither a part of the space nor too small
};
// `file` names the recording in the warning.
ReplayCoverage replay_coverage(const ReplaySpace& space, const std::string& file);
// "covers 12 of 480 configs (2.5%)"; "" when the space's size is not known.
std::string describe_coverage(const ReplayCoverage& coverage);

// The expected minimum of `budget` times drawn without replacement from `times_ms`, exactly:
// with the times sorted, the k-th smallest (1-based, of N) is the minimum with probability
// C(N-k, budget-1) / C(N, budget). A budget of 0 is refused; one above N is N.
double expected_best_of_random(std::vector<double> times_ms, std::size_t budget);

struct ReplayRun {
  std::uint64_t seed = 0;
  std::vector<std::size_t> evaluated;  // config indices in the order the strategy proposed them
  double best_ms = 0;                  // the best scoring time among them
  double score = 0;
};
// What a strategy evaluates within `budget` evaluations (fewer when it runs out). With
// `measured_first`, that config is evaluated first and shown to the strategy, which proposes the
// rest (never it again): how ktune tune measures the family's default before the strategy.
ReplayRun replay_run(const ReplaySpace& space, Strategy& strategy, std::size_t budget,
                     std::optional<std::size_t> measured_first = std::nullopt);

struct ReplayBaseline {
  double optimum_ms;
  double random_ms;  // expected best of random sampling with the same budget
};
ReplayBaseline replay_baseline(const ReplaySpace& space, std::size_t budget);
// 1 when random sampling already expects the optimum (a budget of the whole space) and the
// strategy reached it, 0 when it did not.
double replay_score(double best_ms, const ReplayBaseline& baseline);

struct StrategyScore {
  std::string strategy;
  std::size_t budget = 0;
  std::size_t repeats = 0;
  double mean_best_ms = 0;
  double mean_score = 0;
  double stddev_score = 0;  // sample standard deviation over the repeats; 0 for one repeat
  std::vector<ReplayRun> runs;
};
// Runs `strategy` with seeds first_seed, first_seed + 1, ... (`repeats` of them).
// `prior` goes to every run's StrategyOptions (transfer from other spaces; prior_configs.hpp).
// `measured_first`: a config each run evaluates first (replay_run), when it is in the space.
StrategyScore score_strategy(const ReplaySpace& space, const std::string& strategy, std::size_t budget,
                             std::size_t repeats, std::uint64_t first_seed, const std::vector<Config>& prior = {},
                             const std::optional<Config>& measured_first = std::nullopt);

// The `count` fastest successful configs of a recorded space, fastest first (ties: file order):
// what `ktune replay --prior` takes from each prior space.
std::vector<Config> ranked_configs(const ReplaySpace& space, std::size_t count);

// Configs taken from each prior space (`--prior` of replay and tune): more than any start-up
// uses (at most 9 of 10).
constexpr std::size_t kPriorConfigsPerSpace = 16;

// A recorded space given as prior: which kernel and device it measured, and its fastest configs.
struct PriorSpace {
  std::string file;
  std::string kernel;
  std::string device;
  std::vector<Config> ranked;  // its kPriorConfigsPerSpace fastest configs, fastest first
  std::vector<double> problem_size;  // as ReplaySpace's
};
// Reads a Kernel Tuner cache or T4 results as a prior space (InputError as load_replay_space).
PriorSpace load_prior_space(const std::filesystem::path& file);
// The prior that these spaces give a space of `kernel` with these problem sizes: the spaces of
// that kernel first, then the others, each contributing its best first (same_kernel_first,
// prior_configs.hpp), and within each group the spaces of the closest problem first
// (problem_distance; file order among equals and for files without sizes).
std::vector<Config> prior_from_spaces(const std::vector<PriorSpace>& spaces, const std::string& kernel,
                                      const std::vector<double>& problem_size = {});

}  // namespace ktune
