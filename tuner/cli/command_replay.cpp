// `ktune replay --cache FILE`: scores search strategies offline, against the recorded times of a
// fully measured space (a Kernel Tuner cache or T4 results), over several seeds. No device is
// needed. A recording of only part of its space, or of too few configs, is replayed with a
// warning (replay_coverage); times print in the unit that suits them, and stay ms in the JSON.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>
#include <memory>
#include <optional>

#include "tuner/cli/cli_common.hpp"
#include "tuner/core/errors.hpp"
#include "tuner/core/search_space.hpp"
#include "tuner/formats/kernel_tuner_cache.hpp"
#include "tuner/strategies/prior_configs.hpp"
#include "tuner/strategies/replay.hpp"

namespace ktune::cli {
namespace {

struct ReplayOptions {
  std::string cache_file;
  std::vector<std::string> prior_files;
  std::string starting_points_file;  // a ktune search space whose starting points join the prior
  bool default_first = false;        // measure that space's default first, as ktune tune does
  std::vector<std::string> strategies;  // default: kDefaultStrategy
  std::vector<std::size_t> budgets;
  std::vector<double> budget_fractions;
  std::size_t repeats = 20;
  std::uint64_t seed = 1;
};

// Every budget asked for, in evaluations; 5% of the space when none is given. A --budget above
// the recorded configs is refused rather than capped: every run would evaluate all of them, as
// random sampling would, so every strategy would score 1 and say nothing (--budget-fraction is
// at most 1, the whole recording).
std::vector<std::size_t> budgets_for(const ReplayOptions& options, std::size_t space_size) {
  for (const std::size_t budget : options.budgets)
    if (budget > space_size)
      throw InputError("--budget " + std::to_string(budget) + ": " + options.cache_file + " records only " +
                       std::to_string(space_size) + " configs, so every strategy would evaluate them all and score 1; "
                       "give --budget " + std::to_string(space_size) + " or less, or a --budget-fraction");
  std::vector<std::size_t> budgets = options.budgets;
  for (const double fraction : options.budget_fractions)
    budgets.push_back(std::max<std::size_t>(1, static_cast<std::size_t>(std::llround(fraction * space_size))));
  if (budgets.empty()) budgets.push_back(std::max<std::size_t>(1, static_cast<std::size_t>(std::llround(0.05 * space_size))));
  return budgets;
}

std::string fixed(double value, int decimals) {
  char text[48];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  return text;
}

// A recorded time (ms, as the files hold them) in the unit that suits it.
std::string duration_ms(double ms) { return format_duration_ns(ms * 1e6); }

void print_table(const std::vector<StrategyScore>& scores, const std::vector<ReplayBaseline>& baselines,
                 const std::vector<std::string>& requested) {
  std::vector<std::vector<std::string>> rows{
      {"budget", "strategy", "mean best", "mean score", "stddev", "optimum", "random expects"}};
  for (std::size_t i = 0; i < scores.size(); ++i) {
    const StrategyScore& s = scores[i];
    const std::string name = requested[i] == s.strategy ? s.strategy : requested[i] + " (" + s.strategy + ")";
    rows.push_back({std::to_string(s.budget), name, duration_ms(s.mean_best_ms), fixed(s.mean_score, 3),
                    fixed(s.stddev_score, 3), duration_ms(baselines[i].optimum_ms),
                    duration_ms(baselines[i].random_ms)});
  }
  std::vector<std::size_t> widths(rows[0].size(), 0);
  for (const auto& row : rows)
    for (std::size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
  for (const auto& row : rows) {
    for (std::size_t c = 0; c < row.size(); ++c) {
      const std::string padding(widths[c] - row[c].size(), ' ');
      std::cout << (c < 2 ? row[c] + padding : padding + row[c]) << (c + 1 < row.size() ? "  " : "\n");
    }
  }
}

nlohmann::json result_json(const StrategyScore& score, const ReplayBaseline& baseline, const ReplaySpace& space,
                           const std::string& requested) {
  nlohmann::json runs = nlohmann::json::array();
  for (const ReplayRun& run : score.runs) {
    nlohmann::json evaluated = nlohmann::json::array();
    for (const std::size_t index : run.evaluated) evaluated.push_back(space.keys[index]);
    runs.push_back({{"seed", run.seed}, {"evaluated", evaluated}, {"best", run.best_ms}, {"score", run.score}});
  }
  return {{"strategy", score.strategy},  // what ran: "auto" resolved
          {"requested", requested},
          {"budget", score.budget},
          {"repeats", runs},
          {"score", score.mean_score},
          {"mean_best_ms", score.mean_best_ms},
          {"stddev_score", score.stddev_score},
          {"optimum_ms", baseline.optimum_ms},
          {"random_expected_ms", baseline.random_ms}};
}

nlohmann::json coverage_json(const ReplayCoverage& coverage) {
  return {{"recorded", coverage.recorded},
          {"space", coverage.space ? nlohmann::json(*coverage.space) : nlohmann::json(nullptr)},
          {"warning", coverage.warning.empty() ? nlohmann::json(nullptr) : nlohmann::json(coverage.warning)}};
}

int run_replay(ReplayOptions options, const CommonOptions& common) {
  if (options.strategies.empty()) options.strategies = {kDefaultStrategy};
  for (const std::string& strategy : options.strategies) check_strategy_name(strategy);
  const ReplaySpace space = load_replay_space(options.cache_file);
  const std::vector<std::size_t> budgets = budgets_for(options, space.valid.size());
  const ReplayCoverage coverage = replay_coverage(space, options.cache_file);
  std::vector<PriorSpace> priors;
  for (const std::string& file : options.prior_files) priors.push_back(load_prior_space(file));
  if (options.default_first && options.starting_points_file.empty())
    throw InputError("--default-first needs --starting-points SPACE_FILE, whose default it measures first");
  std::optional<SearchSpace> family_space;
  if (!options.starting_points_file.empty()) {
    family_space = SearchSpace::load(options.starting_points_file);
    if (!space.kernel.empty() && family_space->family() != space.kernel)
      throw InputError("--starting-points " + options.starting_points_file + ": describes " + family_space->family() +
                       ", but " + options.cache_file + " measured " + space.kernel);
    if (options.default_first && !family_space->default_config())
      throw InputError("--default-first: " + options.starting_points_file + " has no default config");
  }
  // The prior as ktune tune builds it (tune_session.cpp): the default, when measured first, held at
  // the front so that no source adds it, the --prior spaces in place of the database, then the
  // starting points.
  std::optional<Config> measured_first;
  if (options.default_first) measured_first = family_space->default_config();
  std::vector<Config> prior;
  if (measured_first) prior.push_back(*measured_first);
  const std::size_t held = prior.size();
  append_unseen(prior, prior_from_spaces(priors, space.kernel, space.problem_size));
  const std::size_t starting_points = family_space ? append_unseen(prior, family_space->starting_points()) : 0;
  prior.erase(prior.begin(), prior.begin() + static_cast<std::ptrdiff_t>(held));
  const std::size_t prior_valid_here = PriorQueue(SpaceIndex(space.valid), space.valid, prior).size();

  // Said before the scoring, which can take minutes, and on stderr in either output mode.
  if (!coverage.warning.empty()) std::cerr << "ktune: warning: " << coverage.warning << "\n";

  std::vector<StrategyScore> scores;
  std::vector<ReplayBaseline> baselines;
  std::vector<std::string> requested;
  for (const std::size_t budget : budgets) {
    const ReplayBaseline baseline = replay_baseline(space, budget);
    for (const std::string& strategy : options.strategies) {
      // "auto" is scored, and reported, as the strategy it stands for on this space and prior.
      const std::string resolved = resolve_strategy(strategy, prior_valid_here);
      scores.push_back(score_strategy(space, resolved, budget, options.repeats, options.seed, prior, measured_first));
      requested.push_back(strategy);
      baselines.push_back(baseline);
    }
  }

  if (common.json) {
    // One result per strategy and budget; with only one, its members are also at the top level.
    nlohmann::json rows = nlohmann::json::array();
    for (std::size_t i = 0; i < scores.size(); ++i) rows.push_back(result_json(scores[i], baselines[i], space, requested[i]));
    nlohmann::json document = rows.size() == 1 ? rows[0] : nlohmann::json::object();
    document.update({{"cache", options.cache_file},
                     {"kernel", space.kernel},
                     {"device", space.device},
                     {"configs", space.valid.size()},
                     {"coverage", coverage_json(coverage)},
                     {"first_seed", options.seed},
                     {"results", rows}});
    nlohmann::json prior_json = nlohmann::json::array();
    for (const PriorSpace& p : priors)
      prior_json.push_back({{"file", p.file}, {"kernel", p.kernel}, {"device", p.device}, {"configs", p.ranked.size()}});
    document["priors"] = prior_json;
    document["starting_points"] = starting_points;
    document["default_first"] = measured_first ? nlohmann::json(measured_first->key()) : nlohmann::json(nullptr);
    document["prior_configs"] = prior.size();
    document["prior_configs_valid"] = prior_valid_here;
    print_json(document);
    return 0;
  }
  std::cout << (space.kernel.empty() ? options.cache_file : space.kernel)
            << (space.device.empty() ? "" : " on " + space.device) << ": "
            << (coverage.space ? describe_coverage(coverage) : std::to_string(space.valid.size()) + " configs")
            << ", " << options.repeats << " repeats from seed " << options.seed << "\n";
  if (!prior.empty())
    std::cout << "prior: " << prior.size() << " configs (" << prior.size() - starting_points << " from "
              << priors.size() << " spaces, " << starting_points << " starting points), " << prior_valid_here
              << " of them valid here\n";
  print_table(scores, baselines, requested);
  return 0;
}

}  // namespace

void register_replay(CLI::App& app, CommonOptions& common, Action& action) {
  auto options = std::make_shared<ReplayOptions>();
  auto* command = app.add_subcommand(
      "replay",
      "Score search strategies offline on a fully measured space (a Kernel Tuner cache or T4\n"
      "results): each strategy runs against the recorded times with a budget of evaluations,\n"
      "over several seeds.\n"
      "score = (best found - random) / (optimum - random), where random is the expected best of\n"
      "random sampling without replacement with the same budget: 0 is no better than random,\n"
      "1 always finds the optimum. A file that records only part of its space (ktune's recordings\n"
      "say how much) or fewer than 100 configs is replayed with a warning: its scores mislead.");
  command->add_option("--cache", options->cache_file,
                      "Kernel Tuner cache or T4 results (.json or .json.gz) of a brute-forced space")
      ->required()
      ->check(CLI::ExistingFile);
  command->add_option("--prior", options->prior_files,
                      "A fully measured space of the same kernel (other device or shape) whose fastest\n"
                      "configs tpe and forest try first; repeat for several (interleaved, each its best\n"
                      "first; the closest problem size first, spaces of other kernels after those of this\n"
                      "one). Configs are matched by parameter names and values; absent ones are skipped")
      ->check(CLI::ExistingFile);
  command->add_option("--starting-points", options->starting_points_file,
                      "A ktune search space file (e.g. search_spaces/gemm.cuda.json) whose starting points\n"
                      "join the prior after the --prior spaces, as ktune tune offers them after its\n"
                      "database's prior: how a tune on an empty database begins")
      ->check(CLI::ExistingFile);
  command->add_flag("--default-first", options->default_first,
                    "Evaluate the --starting-points space's default config first in every run, counted in\n"
                    "the budget and left out of the prior, as ktune tune measures the family's default\n"
                    "before its strategy");
  command->add_option("--strategy", options->strategies,
                      std::string("Strategy to score; repeat for several (default: ") + kDefaultStrategy +
                          ": tpe with a prior valid here, forest without)");
  command->add_option("--budget", options->budgets,
                      "Evaluations per run, at most the configs the file records; repeat for several")
      ->check(CLI::Range(std::size_t{1}, std::numeric_limits<std::size_t>::max() / 2));
  command->add_option("--budget-fraction", options->budget_fractions,
                      "Evaluations per run as a fraction of the space, e.g. 0.02; repeat for several\n"
                      "(default, without --budget: 0.05)")
      ->check(CLI::Range(1e-9, 1.0));
  command->add_option("--repeats", options->repeats, "Runs per strategy and budget, with seeds seed, seed+1, ...")
      ->check(CLI::Range(std::size_t{1}, std::size_t{100000}))
      ->capture_default_str();
  command->add_option("--seed", options->seed, "Seed of the first run")->capture_default_str();
  command->add_flag("--json", common.json, "Print one machine-readable JSON document on stdout");
  command->callback([options, &common, &action] { action = [options, &common] { return run_replay(*options, common); }; });
}

}  // namespace ktune::cli
