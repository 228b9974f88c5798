#include "tuner/strategies/replay.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "tuner/core/errors.hpp"

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
    times.push_back(measured ? record.time_ms : std::nullopt);
    failures.push_back(record.failure);
    any_success = any_success || measured;
  }
  if (!any_success) throw InputError(cache.kernel_name + ": no record has a time to score strategies against");
  const std::uint64_t total = saturating_product(parameters);
  return ReplaySpace{ValidConfigs(std::move(parameters), std::move(indices), total, 0.0), std::move(times),
                     std::move(failures)};
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

double replay_best_ms(const ReplaySpace& space, Strategy& strategy, std::size_t budget) {
  const std::vector<double> times = space.scoring_times_ms();
  double best = std::numeric_limits<double>::infinity();
  for (std::size_t evaluated = 0; evaluated < budget; ++evaluated) {
    const auto index = strategy.next();
    if (!index) break;
    if (*index >= times.size()) throw std::logic_error("replay: a strategy proposed an index past the space");
    strategy.observe(*index, space.recorded_result(*index));
    best = std::min(best, times[*index]);
  }
  return best;
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
                             std::size_t repeats, std::uint64_t first_seed) {
  if (repeats == 0) throw InputError("--repeats: must be at least 1");
  const ReplayBaseline baseline = replay_baseline(space, budget);
  std::vector<double> scores;
  StrategyScore result{strategy, budget, repeats};
  for (std::size_t r = 0; r < repeats; ++r) {
    const auto instance = make_strategy(strategy, space.valid, first_seed + r);
    const double best = replay_best_ms(space, *instance, budget);
    result.mean_best_ms += best / static_cast<double>(repeats);
    scores.push_back(replay_score(best, baseline));
  }
  for (const double score : scores) result.mean_score += score / static_cast<double>(repeats);
  if (repeats > 1) {
    double squares = 0;
    for (const double score : scores) squares += (score - result.mean_score) * (score - result.mean_score);
    result.stddev_score = std::sqrt(squares / static_cast<double>(repeats - 1));
  }
  return result;
}

}  // namespace ktune
