#include "tuner/strategies/replay.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>

#include "tuner/core/errors.hpp"
#include "tuner/formats/data_file.hpp"
#include "tuner/strategies/prior_configs.hpp"

namespace ktune {
namespace {

std::uint32_t value_index_of(const std::vector<Value>& values, const Value& value, const std::string& where) {
  const auto found = std::find(values.begin(), values.end(), value);
  if (found == values.end()) throw InputError(where + ": value " + to_string(value) + " is not in tune_params");
  return static_cast<std::uint32_t>(found - values.begin());
}

std::uint64_t saturating_product(const std::vector<Parameter>& parameters) {
  std::uint64_t total = 1;
  for (const Parameter& parameter : parameters) {
    const std::uint64_t count = parameter.values.size();
    total = count != 0 && total > std::numeric_limits<std::uint64_t>::max() / count
                ? std::numeric_limits<std::uint64_t>::max()
                : total * count;
  }
  return total;
}

// The file's kSpaceConfigsMember, when it has one. InputError when it is not a whole number or
// is below the records' count (a space cannot have fewer valid configs than were measured).
std::optional<std::uint64_t> recorded_space_configs(const KernelTunerCache& cache) {
  for (const auto& [name, value] : cache.other_header_members) {
    if (name != kSpaceConfigsMember) continue;
    if (!value.is_number_integer() || (!value.is_number_unsigned() && value.get<std::int64_t>() < 0))
      throw InputError(cache.kernel_name + ": \"" + name + "\" is " + value.dump() +
                       ", not a whole number of valid configs");
    const auto configs = value.get<std::uint64_t>();
    if (configs < cache.records.size())
      throw InputError(cache.kernel_name + ": \"" + name + "\" says the space has " + std::to_string(configs) +
                       " valid configs, but the file records " + std::to_string(cache.records.size()));
    return configs;
  }
  return std::nullopt;
}

}  // namespace

EvaluationResult ReplaySpace::recorded_result(std::size_t index) const {
  EvaluationResult result;
  if (time_ms[index]) {
    result.stats.count = 1;
    result.stats.median_ns = result.stats.min_ns = result.stats.max_ns = result.stats.mean_ns = *time_ms[index] * 1e6;
    return result;
  }
  result.outcome = failure[index] == KernelTunerFailure::compilation_failed ? Outcome::compile_error
                                                                            : Outcome::launch_error;
  result.message = failure[index] ? std::string(to_string(*failure[index])) : "no time recorded";
  return result;
}

std::vector<double> ReplaySpace::scoring_times_ms() const {
  double slowest = 0;
  for (const auto& time : time_ms)
    if (time) slowest = std::max(slowest, *time);
  std::vector<double> times;
  times.reserve(time_ms.size());
  for (const auto& time : time_ms) times.push_back(time.value_or(slowest));
  return times;
}

ReplaySpace replay_space(const KernelTunerCache& cache) {
  std::vector<Parameter> parameters;
  std::vector<std::size_t> column_of_key;  // tune_params order -> position in a record's config
  for (const auto& [name, values] : cache.tune_params) {
    const auto key = std::find(cache.tune_params_keys.begin(), cache.tune_params_keys.end(), name);
    if (key == cache.tune_params_keys.end())
      throw InputError(cache.kernel_name + ": tune_params has '" + name + "', which tune_params_keys lacks");
    column_of_key.push_back(static_cast<std::size_t>(key - cache.tune_params_keys.begin()));
    parameters.push_back(Parameter{name, values, ""});
  }
  std::vector<std::uint32_t> indices;
  std::vector<std::string> keys;
  std::vector<std::optional<double>> times;
  std::vector<std::optional<KernelTunerFailure>> failures;
  bool any_success = false;
  for (const KernelTunerRecord& record : cache.records) {
    const std::string where = cache.kernel_name + ": record \"" + record.key + "\"";
    if (record.config.size() != cache.tune_params_keys.size())
      throw InputError(where + ": has " + std::to_string(record.config.size()) + " values for " +
                       std::to_string(cache.tune_params_keys.size()) + " tune_params_keys");
    for (std::size_t p = 0; p < parameters.size(); ++p)
      indices.push_back(value_index_of(parameters[p].values, record.config[column_of_key[p]], where));
    const bool measured = record.time_ms && std::isfinite(*record.time_ms) && !record.failure;
    keys.push_back(record.key);
    times.push_back(measured ? record.time_ms : std::nullopt);
    failures.push_back(record.failure);
    any_success = any_success || measured;
  }
  if (!any_success) throw InputError(cache.kernel_name + ": no record has a time to score strategies against");
  const std::uint64_t total = saturating_product(parameters);
  std::vector<double> problem_size;
  for (const Value& v : cache.problem_size)
    if (is_number(v)) problem_size.push_back(as_double(v, "problem_size"));
  return ReplaySpace{cache.kernel_name, cache.device_name,
                     ValidConfigs(std::move(parameters), std::move(indices), total, 0.0),
                     std::move(keys), std::move(times), std::move(failures), std::move(problem_size),
                     recorded_space_configs(cache)};
}

ReplaySpace replay_space(const T4Results& results) {
  if (results.results.empty()) throw InputError("T4 results: no results to replay");
  // The parameters of the first result, each with every value any result gives it.
  KernelTunerCache cache;
  for (const auto& [name, value] : results.results.front().configuration.values) {
    cache.tune_params_keys.push_back(name);
    cache.tune_params.emplace_back(name, std::vector<Value>{});
  }
  for (std::size_t r = 0; r < results.results.size(); ++r) {
    const T4Result& result = results.results[r];
    const std::string where = "T4 results[" + std::to_string(r) + "]";
    KernelTunerRecord record;
    for (auto& [name, values] : cache.tune_params) {
      if (!result.configuration.has(name)) throw InputError(where + ".configuration: no value for '" + name + "'");
      const Value& value = result.configuration.at(name);
      record.config.push_back(value);
      if (std::find(values.begin(), values.end(), value) == values.end()) values.push_back(value);
    }
    if (result.configuration.values.size() != cache.tune_params_keys.size())
      throw InputError(where + ".configuration: has other parameters than the first result");
    record.key = kernel_tuner_key(record.config);
    const T4Measurement* time = result.measurement("time");
    if (result.invalidity != T4Invalidity::correct || time == nullptr || !time->value.is_number())
      record.failure = result.invalidity == T4Invalidity::compile ? KernelTunerFailure::compilation_failed
                                                                  : KernelTunerFailure::runtime_failed;
    else
      record.time_ms = time->value.get<double>();
    cache.records.push_back(std::move(record));
  }
  // Numbers by value whether stored as integers or reals; strings after numbers.
  const auto ascending = [](const Value& a, const Value& b) {
    const bool a_number = !std::holds_alternative<std::string>(a), b_number = !std::holds_alternative<std::string>(b);
    if (a_number && b_number) return as_double(a, "T4 results") < as_double(b, "T4 results");
    if (a_number != b_number) return a_number;
    return std::get<std::string>(a) < std::get<std::string>(b);
  };
  for (auto& [name, values] : cache.tune_params) std::sort(values.begin(), values.end(), ascending);
  const std::string space_member(kSpaceConfigsMember);
  if (results.metadata.is_object() && results.metadata.contains(space_member))
    cache.other_header_members.emplace_back(space_member, results.metadata.at(space_member));
  return replay_space(cache);
}

ReplaySpace load_replay_space(const std::filesystem::path& file) {
  const std::string text = read_text_maybe_gzip(file);
  // T4 results are the only one of the two with a top-level "results" array.
  bool t4 = false;
  try {
    const auto json = nlohmann::json::parse(text);
    t4 = json.is_object() && json.contains("results") && json.at("results").is_array();
  } catch (const nlohmann::json::parse_error&) {
    // An unterminated Kernel Tuner cache (an interrupted run) is not valid JSON; its reader
    // recovers the complete records.
  }
  if (t4) return replay_space(read_t4_results(text, file.string()));
  return replay_space(read_kernel_tuner_cache(text, file.string()));
}

ReplayCoverage replay_coverage(const ReplaySpace& space, const std::string& file) {
  ReplayCoverage coverage{space.valid.size(), space.space_configs, ""};
  std::vector<std::string> reasons;
  if (coverage.space && coverage.recorded < *coverage.space)
    reasons.push_back(file + " " + describe_coverage(coverage) +
                      " of its space: the scores are for the recorded subset (how fast each strategy finds the best "
                      "of those " + std::to_string(coverage.recorded) +
                      " configs), not for the space; record the whole space (ktune tune --strategy brute_force "
                      "--record DIR) to score strategies on it");
  if (coverage.recorded < kMinReplayConfigs)
    reasons.push_back(file + " records only " + std::to_string(coverage.recorded) + " configs, fewer than the " +
                      std::to_string(kMinReplayConfigs) +
                      " that scores need to tell strategies apart: at the default budget (5%) a run has under 5 "
                      "evaluations, most of them the start-up before any model");
  coverage.warning = join_names(reasons, "; ");
  return coverage;
}

std::string describe_coverage(const ReplayCoverage& coverage) {
  if (!coverage.space) return "";
  char percent[32];
  std::snprintf(percent, sizeof percent, "%.3g%%",
                *coverage.space ? 100.0 * static_cast<double>(coverage.recorded) / static_cast<double>(*coverage.space)
                                : 100.0);
  return "covers " + std::to_string(coverage.recorded) + " of " + std::to_string(*coverage.space) + " configs (" +
         percent + ")";
}

double expected_best_of_random(std::vector<double> times_ms, std::size_t budget) {
  if (times_ms.empty()) throw InputError("expected_best_of_random: no times");
  if (budget == 0) throw InputError("expected_best_of_random: the budget must be at least 1");
  std::sort(times_ms.begin(), times_ms.end());
  const std::size_t n = times_ms.size();
  budget = std::min(budget, n);
  // P(k) = C(N-k, b-1) / C(N, b) for k = 1..N-b+1, by the ratio of neighbours, which stays in
  // range where the binomials themselves overflow: P(1) = b / N and
  // P(k+1) / P(k) = (N-k-b+1) / (N-k).
  double probability = static_cast<double>(budget) / static_cast<double>(n);
  double expected = 0;
  for (std::size_t k = 1; k + budget <= n + 1; ++k) {
    expected += probability * times_ms[k - 1];
    if (n > k) probability *= static_cast<double>(n - k - budget + 1) / static_cast<double>(n - k);
  }
  return expected;
}

ReplayRun replay_run(const ReplaySpace& space, Strategy& strategy, std::size_t budget,
                     std::optional<std::size_t> measured_first) {
  const std::vector<double> times = space.scoring_times_ms();
  ReplayRun run;
  run.best_ms = std::numeric_limits<double>::infinity();
  for (std::size_t evaluated = 0; evaluated < budget; ++evaluated) {
    std::optional<std::size_t> index;
    if (evaluated == 0 && measured_first) {
      index = measured_first;
    } else {
      do index = strategy.next();
      while (index && index == measured_first);
    }
    if (!index) break;
    if (*index >= times.size()) throw std::logic_error("replay: a strategy proposed an index past the space");
    strategy.observe(*index, space.recorded_result(*index));
    run.evaluated.push_back(*index);
    run.best_ms = std::min(run.best_ms, times[*index]);
  }
  return run;
}

ReplayBaseline replay_baseline(const ReplaySpace& space, std::size_t budget) {
  const std::vector<double> times = space.scoring_times_ms();
  return {*std::min_element(times.begin(), times.end()), expected_best_of_random(times, budget)};
}

double replay_score(double best_ms, const ReplayBaseline& baseline) {
  const double gain = baseline.optimum_ms - baseline.random_ms;
  if (gain == 0) return best_ms <= baseline.optimum_ms ? 1.0 : 0.0;
  return (best_ms - baseline.random_ms) / gain;
}

StrategyScore score_strategy(const ReplaySpace& space, const std::string& strategy, std::size_t budget,
                             std::size_t repeats, std::uint64_t first_seed, const std::vector<Config>& prior,
                             const std::optional<Config>& measured_first) {
  std::optional<std::size_t> first_index;  // matched as prior configs are: by parameter names and values
  if (measured_first)
    if (const PriorQueue match(SpaceIndex(space.valid), space.valid, {*measured_first}); match.size() > 0)
      first_index = match.indices().front();
  if (repeats == 0) throw InputError("--repeats: must be at least 1");
  const ReplayBaseline baseline = replay_baseline(space, budget);
  std::vector<double> scores;
  StrategyScore result;
  result.strategy = strategy;
  result.budget = budget;
  result.repeats = repeats;
  for (std::size_t r = 0; r < repeats; ++r) {
    const auto instance = make_strategy(strategy, space.valid, StrategyOptions{.seed = first_seed + r, .budget = budget, .prior = prior});
    ReplayRun run = replay_run(space, *instance, budget, first_index);
    run.seed = first_seed + r;
    run.score = replay_score(run.best_ms, baseline);
    result.mean_best_ms += run.best_ms / static_cast<double>(repeats);
    scores.push_back(run.score);
    result.runs.push_back(std::move(run));
  }
  for (const double score : scores) result.mean_score += score / static_cast<double>(repeats);
  if (repeats > 1) {
    double squares = 0;
    for (const double score : scores) squares += (score - result.mean_score) * (score - result.mean_score);
    result.stddev_score = std::sqrt(squares / static_cast<double>(repeats - 1));
  }
  return result;
}

std::vector<Config> ranked_configs(const ReplaySpace& space, std::size_t count) {
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < space.valid.size(); ++i)
    if (space.time_ms[i]) order.push_back(i);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return *space.time_ms[a] < *space.time_ms[b]; });
  if (order.size() > count) order.resize(count);
  std::vector<Config> configs;
  for (const std::size_t index : order) configs.push_back(space.valid.config(index));
  return configs;
}

PriorSpace load_prior_space(const std::filesystem::path& file) {
  const ReplaySpace space = load_replay_space(file);
  return {file.string(), space.kernel, space.device, ranked_configs(space, kPriorConfigsPerSpace), space.problem_size};
}

std::vector<Config> prior_from_spaces(const std::vector<PriorSpace>& spaces, const std::string& kernel,
                                      const std::vector<double>& problem_size) {
  std::vector<std::vector<Config>> same_kernel, other_kernels;
  std::vector<const PriorSpace*> ordered;
  for (const PriorSpace& space : spaces) ordered.push_back(&space);
  std::stable_sort(ordered.begin(), ordered.end(), [&](const PriorSpace* a, const PriorSpace* b) {
    return problem_distance(a->problem_size, problem_size) < problem_distance(b->problem_size, problem_size);
  });
  for (const PriorSpace* space : ordered) (space->kernel == kernel ? same_kernel : other_kernels).push_back(space->ranked);
  return same_kernel_first(same_kernel, other_kernels);
}

}  // namespace ktune
