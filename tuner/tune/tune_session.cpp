#include "tuner/tune/tune_session.hpp"

#include <numeric>
#include <cstdio>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <deque>
#include <set>
#include <thread>

#include "db/store.hpp"
#include "kernels/family.hpp"
#include "ktune/build_info.hpp"
#include "tuner/backends/registry.hpp"
#include "tuner/backends/variant_builder.hpp"
#include "tuner/core/errors.hpp"
#include "tuner/core/machine_load.hpp"
#include "tuner/core/search_space.hpp"
#include "tuner/formats/t1/t1_space.hpp"
#include "tuner/strategies/prior_configs.hpp"
#include "tuner/strategies/space_index.hpp"
#include "tuner/strategies/strategy.hpp"
#include "tuner/tune/evaluation_job.hpp"
#include "tuner/tune/observation_order.hpp"
#include "tuner/tune/hello_timeout.hpp"
#include "tuner/tune/host_name.hpp"
#include "tuner/tune/input_seed.hpp"
#include "tuner/tune/plausibility.hpp"
#include "tuner/core/space_context.hpp"
#include "tuner/tune/covering_sample.hpp"
#include "tuner/tune/space_files.hpp"
#include "tuner/tune/stop_request.hpp"
#include "tuner/tune/tune_prior.hpp"
#include "tuner/tune/tune_recording.hpp"
#include "tuner/worker/compile_processes.hpp"

namespace ktune {

namespace {


// Marks the run failed, with the reason, when the tune ends by an exception.
class RunGuard {
 public:
  RunGuard(Store& store, std::int64_t run_id) : store_(store), run_id_(run_id) {}
  ~RunGuard() {
    if (!finished_) {
      try {
        store_.finish_run(run_id_, "failed");
      } catch (...) {  // never throw from a destructor; the original error is what matters
      }
    }
  }
  void finish(const std::string& status, const DeviceUse& device_use) {
    store_.finish_run(run_id_, status, device_use);
    finished_ = true;
  }

 private:
  Store& store_;
  std::int64_t run_id_;
  bool finished_ = false;
};

// A timeout measured under a shorter limit than this run's is measured again.
bool worth_retrying(const EvaluationResult& stored, double config_timeout_s) {
  return stored.outcome == Outcome::timeout &&
         stored.environment.value("config_timeout_s", 0.0) < config_timeout_s;
}

// A stored result measured less strictly than this tune asks: with fewer samples than
// --min-samples, or (with --max-noise) not settled under it. Raced results are as strict as they
// need to be: they only show the config is not the winner.
bool measured_less_strictly(const EvaluationResult& stored, const TuneRequest& request) {
  if (request.remeasure) return true;
  if (stored.outcome == Outcome::noisy && !request.strict_noise) return true;  // judged by a stricter tune
  if (stored.outcome != Outcome::ok && stored.outcome != Outcome::noisy) return false;
  if (stopped_by_racing(stored.message)) return false;
  const StoppingCriteria& asked = request.measure.stopping;
  // Fewer samples than asked for only counts when fewer were asked for then: a config whose
  // time cap came before its minimum samples would otherwise be measured again on every rerun.
  const auto& measured_with = stored.environment.value("measured_with", nlohmann::json::object());
  const std::size_t asked_then = measured_with.value("min_samples", std::size_t{0});
  if (asked_then > 0 && asked_then < asked.min_samples && stored.stats.count < asked.min_samples) return true;
  return request.strict_noise && stored.stats.rel_stddev > asked.max_noise;
}

std::string percent_text(double fraction) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f%%", fraction * 100);
  return text;
}

int compile_threads() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

// --setup-timeout, else the default, shortened to a tune's time limit (at least a minute): a
// worker stopped while preparing must not hold a 30-second tune for ten minutes.
double setup_timeout_for(const TuneRequest& request) {
  if (request.setup_timeout_s) return *request.setup_timeout_s;
  if (request.time_limit_s) return std::min(kDefaultSetupTimeoutSeconds, std::max(60.0, *request.time_limit_s));
  return kDefaultSetupTimeoutSeconds;
}

bool better(const EvaluationResult& result, const std::optional<ConfigTiming>& best) {
  return result.outcome == Outcome::ok && (!best || result.stats.median_ns < best->stats.median_ns);
}

}  // namespace

nlohmann::json TuneSummary::to_json() const {
  nlohmann::json problem_json = nlohmann::json::object();
  for (const auto& [name, value] : problem.dims) problem_json[name] = value;
  problem_json["precision"] = std::string(ktune::to_string(problem.precision));
  nlohmann::json outcomes_json = nlohmann::json::object();
  for (const auto& [name, count] : outcomes) outcomes_json[name] = count;
  auto timing = [&](const std::optional<ConfigTiming>& t) -> nlohmann::json {
    if (!t) return nullptr;
    const double seconds = t->stats.median_ns * 1e-9;
    return {{"config", t->config.to_json()},
            {"median_ns", t->stats.median_ns},
            {"min_ns", t->stats.min_ns},
            {"rel_stddev", t->stats.rel_stddev},
            {"samples", t->stats.count},
            {"error", t->error},
            {"bytes_per_second", seconds > 0 ? bytes / seconds : 0.0},
            {"flops_per_second", seconds > 0 ? flops / seconds : 0.0}};
  };
  nlohmann::json out = {{"kernel", family},
                        {"backend", backend},
                        {"device", device.name},
                        {"device_fingerprint", device.fingerprint},
                        {"problem", problem_json},
                        {"space", {{"total", space_total}, {"valid", space_valid}, {"seconds", space_seconds},
                                   {"file", space_file.string()}}},
                        {"evaluated", evaluated},
                        {"reused", reused},
                        {"abandoned_runs", abandoned_runs},
                        {"record_error", record_error.empty() ? nlohmann::json(nullptr) : nlohmann::json(record_error)},
                        {"outcomes", outcomes_json},
                        {"best", timing(best)},
                        {"default", timing(default_config)},
                        {"seconds", seconds},
                        {"device_use", device_use.to_json()},
                        {"stop_reason", stop_reason},
                        {"interrupted", interrupted},
                        {"dropped_at_stop", dropped_at_stop},
                        {"run_id", run_id},
                        {"devices", devices},
                        {"strategy", strategy},
                        {"prior_configs", prior_configs},
                        {"prior_sources", {{"files", prior_from_files},
                                           {"database", prior_from_database},
                                           {"starting_points", prior_starting_points}}},
                        {"prior_configs_valid", prior_configs_valid}};
  if (!lost.empty()) out["lost"] = lost;
  if (!recorded_files.empty()) {
    nlohmann::json files = nlohmann::json::array();
    for (const auto& file : recorded_files) files.push_back(file.string());
    out["recorded"] = files;
  }
  if (best && default_config && best->stats.median_ns > 0)
    out["speedup_over_default"] = default_config->stats.median_ns / best->stats.median_ns;
  out["verification"] = verification;
  if (reference_config) out["reference_config"] = reference_config->to_json();
  if (!launch_rule.empty() || !default_launch.empty())
    out["geometry"] = {{"rule", launch_rule}, {"default", default_launch}};
  out["implausible"] = implausible;
  if (!implausible_example.empty()) out["implausible_example"] = implausible_example;
  out["noisy"] = noisy;
  if (!noisy_example.empty()) out["noisy_example"] = noisy_example;
  out["warnings"] = warnings;
  return out;
}

namespace {

// InputError when the problem cannot fit the device: the worker keeps the problem's tensors in
// its precision plus float64 copies for the reference.
void check_problem_fits(const Problem& problem, double bytes, const DeviceInfo& device) {
  const double needed_bytes = bytes * (1.0 + 8.0 / element_bytes(problem.precision));
  if (const auto memory = device.limits.find("memory_bytes");
      memory != device.limits.end() && needed_bytes > static_cast<double>(memory->second))
    throw InputError("--shape: " + problem.describe() + " needs about " +
                     std::to_string(static_cast<long long>(std::ceil(needed_bytes / (1 << 30)))) + " GiB, more than the " +
                     std::to_string(memory->second >> 30) + " GiB of " + device.name +
                     "; choose a smaller --shape");
}

// What every device-model tune of one request shares.
struct TuneInputs {
  const TuneRequest& request;
  const KernelFamily& family;
  const Problem& problem;
  const SearchSpace& space;
  const std::filesystem::path& space_file;
  const std::string& source_hash;
};

// One tune on the devices of one model: the strategy proposes, the pool measures on every device
// of the model at once, and each result is recorded as it comes back.
// `valid` is the space enumerated for this device (never empty: run_tune refuses that first).
TuneSummary tune_on_model(const TuneInputs& in, EvaluationPool& pool, const DeviceInfo& device,
                          const ValidConfigs& valid, Store& store, TuneObserver& observer) {
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  const TuneRequest& request = in.request;
  const Problem& problem = in.problem;
  TuneSummary summary;
  summary.family = in.family.name();
  if (std::string loaded = machine_load_warning(); !loaded.empty()) summary.warnings.push_back(std::move(loaded));
  summary.backend = request.backend;
  summary.device = device;
  summary.problem = problem;
  summary.space_file = in.space_file;
  summary.bytes = in.family.byte_count(problem);
  summary.flops = in.family.flop_count(problem);

  const SpaceContext context = make_context(problem, device);
  summary.launch_rule = in.family.launch_rule();
  if (valid.size() > 0) {
    // The launch of the default config (else the first valid one), printed and kept with the run.
    const Config shown = in.space.default_config() && valid.find(*in.space.default_config())
                             ? *in.space.default_config()
                             : valid.config(0);
    summary.default_launch = {{"config", shown.to_json()}, {"launch", launch_geometry(in.space, shown, context)}};
  }
  summary.space_total = valid.total();
  summary.space_valid = valid.size();
  summary.space_seconds = valid.seconds();

  const auto device_id = store.upsert_device(device);
  const auto kernel_id = store.upsert_kernel(in.family.name(), request.backend, in.source_hash);
  const auto problem_id = store.upsert_problem(problem);
  // The budget counts the default and reused configs too, so it is an upper bound on what the
  // strategy itself gets to propose: close enough to plan exploration by.
  std::optional<std::size_t> budget_hint;
  if (request.budget) budget_hint = std::min(*request.budget, valid.size());
  StrategyOptions strategy_options{.seed = request.seed, .budget = budget_hint, .prior = {}};
  std::vector<Config>& prior = strategy_options.prior;
  // The default is measured first anyway: held at the front while the sources join, so that none
  // of them adds it again (as a prior config it would only take a start-up slot), then removed.
  if (in.space.default_config()) prior.push_back(*in.space.default_config());
  const std::size_t held = prior.size();
  const std::vector<Config> from_files = prior_from_spaces(request.prior_spaces, in.family.name(), problem_sizes(problem));
  // A recorded space of another kernel (or parameters) matches nothing here: said, not dropped.
  if (!request.prior_spaces.empty() &&
      (from_files.empty() || PriorQueue(SpaceIndex(valid), valid, from_files).size() == 0))
    summary.warnings.push_back("--prior: none of the " + std::to_string(from_files.size()) +
                               " fastest configs of the given files is a valid config of " + in.family.name() +
                               " here (they are matched by parameter names and values), so none was used");
  summary.prior_from_files = append_unseen(prior, from_files);
  if (request.use_prior) {
    summary.prior_from_database =
        append_unseen(prior, tune_prior(store, in.family.name(), request.backend, device, problem));
    // Last: the family's own record of what was fast elsewhere, which an empty database lacks.
    summary.prior_starting_points = append_unseen(prior, in.space.starting_points());
  }
  prior.erase(prior.begin(), prior.begin() + static_cast<std::ptrdiff_t>(held));
  summary.prior_configs = prior.size();
  if (!prior.empty()) summary.prior_configs_valid = PriorQueue(SpaceIndex(valid), valid, prior).size();
  // "auto" becomes the strategy it stands for here, which the run records.
  summary.strategy = resolve_strategy(request.strategy, summary.prior_configs_valid);
  RunInfo run{build_info::version, build_info::git_commit, request.argv, host_name(), "tune",
              summary.strategy, request.seed};
  summary.run_id = store.begin_run(run, device_id, kernel_id, problem_id);
  RunGuard run_guard(store, summary.run_id);
  if (!summary.launch_rule.empty()) store.set_run_notes(summary.run_id, {{"launch_rule", summary.launch_rule},
                                                                         {"default_launch", summary.default_launch}});
  auto stored = store.load_measurements(device_id, kernel_id, problem_id);

  std::uint64_t next_job_id = 1;
  // The family's default goes first, so every tune reports its speed-up over the default.
  std::optional<std::size_t> default_index;
  if (in.space.default_config()) default_index = valid.find(*in.space.default_config());
  if (in.space.default_config() && !default_index)
    summary.warnings.push_back("the default config " + in.space.default_config()->describe() +
                               " is not valid at this problem (the space's restrictions exclude it), so there is "
                               "no speed-up over the default to report");
  auto strategy = make_strategy(summary.strategy, valid, strategy_options);
  bool default_pending = default_index.has_value();
  auto next_index = [&]() -> std::optional<std::size_t> {
    if (default_pending) {
      default_pending = false;
      return default_index;
    }
    for (auto index = strategy->next(); index; index = strategy->next())
      if (index != default_index) return index;
    return std::nullopt;
  };

  // GPU variants are compiled ahead on the CPU cores, `lookahead` configs in front of the devices.
  // NVRTC and hiprtc compile in processes of their own (compile_processes.hpp).
  const auto builder = make_measured_variant_builder(request.backend, in.family, problem,
                                                     device.properties.value("compile_arch", ""), compile_threads(),
                                                     in.space.launch_only_names());
  EvaluationTask task{request.backend, problem, request.measure, request.config_timeout_s,
                      setup_timeout_for(request)};
  task.settings.seed = mix_seed(request.seed, problem.key());

  // The device time of every config measured in this run (not of those reused).
  DeviceUseTally device_use;
  // A measurement back from a device: stamped, recorded, counted.
  auto record = [&](FinishedEvaluation& done, bool retry) {
    EvaluationResult& result = done.result;
    result.environment["evaluation_seconds"] = done.evaluation_seconds;
    // The device's own time on this config (tuner/measure/engine.hpp), kept with the result.
    result.environment["device_ns"] = {{"kernel", result.device_time.kernel_ns},
                                       {"between", result.device_time.between_ns}};
    if (done.prepare_seconds > 0) result.environment["prepare_seconds"] = done.prepare_seconds;
    result.environment["config_timeout_s"] = request.config_timeout_s;
    result.environment["launch"] = done.job.launch;  // derived geometry, kept with the result
    if (summary.devices.size() > 1) result.environment["measured_on"] = done.device;
    result.environment["tune_seconds"] = elapsed();  // when in the tune it came back
    // How it was measured, so a later tune asking for more can tell (measured_less_strictly).
    const StoppingCriteria& stopping = request.measure.stopping;
    result.environment["measured_with"] = {{"min_samples", stopping.min_samples},
                                           {"max_noise", stopping.max_noise},
                                           {"max_seconds", stopping.max_time_s}};
    if (result.outcome == Outcome::ok && !stopped_by_racing(result.message)) {
      const double noise = result.stats.rel_stddev;
      if (request.strict_noise && noise > stopping.max_noise) {
        result.outcome = Outcome::noisy;
        result.message = "samples never settled: noise " + percent_text(noise) + " above --max-noise " +
                         percent_text(stopping.max_noise) + " after " + std::to_string(result.stats.count) +
                         " samples (not ranked; " + result.message + ")";
      } else if (noise > request.noisy_above) {
        result.environment["noisy"] = "noise " + percent_text(noise) + " above " + percent_text(request.noisy_above);
        ++summary.noisy;
        if (summary.noisy_example.empty())
          summary.noisy_example = done.job.config.key() + ": " + result.environment["noisy"].get<std::string>();
      }
    }
    if (const std::string why = implausibility(result, summary.bytes, device); !why.empty()) {
      result.environment["implausible"] = why;
      ++summary.implausible;
      if (summary.implausible_example.empty()) summary.implausible_example = done.job.config.key() + ": " + why;
    }
    store.record_measurement(summary.run_id, device_id, kernel_id, problem_id, done.job.config, result, retry);
    ++summary.evaluated;
    device_use.add(done.job.config.key(), done.device, result.device_time);
  };

  // The family keeps the output of a trusted config as its reference (a T1 spec without
  // ReferenceArguments): the default config, else the first config that runs in the space's
  // order, measured alone before the tune proper, which then checks every other config against it.
  // Measured before the tune proper (the reference): visited, not reused, when it comes to them.
  std::set<std::string> measured_first;
  double spent_seconds = 0;
  if (in.family.reference_from_config(problem)) {
    EvaluationTask capture = task;
    capture.settings.capture_reference = true;
    std::vector<std::size_t> candidates;
    if (default_index) candidates.push_back(*default_index);
    for (std::size_t index = 0; index < valid.size() && candidates.size() < 32; ++index)
      if (index != default_index) candidates.push_back(index);
    std::string failures;
    for (std::size_t index : candidates) {
      const Config config = valid.config(index);
      pool.begin(capture, device.fingerprint, builder.get());
      pool.submit(EvaluationJob{next_job_id++, index, config, launch_geometry(in.space, config, context)});
      FinishedEvaluation done = pool.wait();
      pool.end();
      if (done.abandoned) break;  // the stop cut it short: nothing to record or keep
      done.result.environment["reference"] = true;
      record(done, stored.count(config.key()) > 0);
      stored[config.key()] = StoredMeasurement{0, summary.run_id, config, done.result, ""};
      measured_first.insert(config.key());
      spent_seconds += done.evaluation_seconds;
      if (done.result.outcome == Outcome::ok) {
        summary.reference_config = config;
        break;
      }
      in.family.drop_reference(problem);
      failures += "\n  " + config.key() + ": " + std::string(to_string(done.result.outcome)) + " " +
                  done.result.message.substr(0, 200);
      if (g_stop_requested.load()) break;
    }
    if (!summary.reference_config && g_stop_requested.load())
      throw Interrupted("stopped before a config ran to give the reference output; nothing more was measured");
    if (!summary.reference_config)
      throw CheckFailed("no config of " + in.space_file.string() + " ran to keep its output as the reference for the "
                        "others (the default first, then the space in order; " + std::to_string(candidates.size()) +
                        " tried):" + failures + "\nFix the kernel or its launch, give ReferenceArguments, or pass "
                        "--no-verify to tune unverified");
  }
  summary.verification = in.family.verification(problem);
  // One device keeps a config waiting beside the one it measures, whatever the strategy: a
  // learning one sees its results in an order a resumed tune repeats (observation_order.hpp).
  pool.begin(task, device.fingerprint, builder.get(), /*queue_ahead=*/true);
  // Declared after the builder, so that on an exception the devices stop using it before it goes.
  struct PoolTask {
    EvaluationPool& pool;
    bool ended = false;
    ~PoolTask() {
      if (!ended) pool.abandon();
    }
  } pool_task{pool};
  summary.devices = pool.device_labels_in_use();
  const std::size_t lookahead = builder ? static_cast<std::size_t>(2 * compile_threads()) + summary.devices.size() : 0;
  std::deque<std::size_t> upcoming;
  // A learning strategy on one device sees results in proposal order, `lag` proposals behind
  // (observation_order.hpp): as far behind as the compile lookahead already put it, plus the
  // configs at the device.
  ObservationOrder order(strategy->learns() && pool.devices_in_use() == 1 ? lookahead + 3 : 0);
  bool exhausted = false;  // the strategy has nothing more to propose
  // The next config to measure: proposed ahead (so that it compiles while others are measured),
  // then the first proposed whose build is done or that needs none (found in the database), so
  // the device measures the next ones while a slow compile finishes; else the first. Nothing when
  // the strategy may not propose yet (it waits on an observation) or has nothing more.
  auto take_next = [&]() -> std::optional<std::size_t> {
    while (!exhausted && upcoming.size() <= lookahead && order.may_propose()) {
      const auto index = next_index();
      if (!index) {
        exhausted = true;
        break;
      }
      upcoming.push_back(*index);
      const Config config = valid.config(*index);
      order.proposed(*index, config);
      if (builder && !stored.count(config.key())) builder->prefetch(*index, config);
    }
    if (upcoming.empty()) return std::nullopt;
    auto chosen = upcoming.begin();
    if (builder)
      for (auto it = upcoming.begin(); it != upcoming.end(); ++it)
        if (builder->ready(*it) || stored.count(valid.config(*it).key())) {
          chosen = it;
          break;
        }
    const std::size_t index = *chosen;
    upcoming.erase(chosen);
    return index;
  };

  TuneRecording recording(valid.parameters(), in.family.name(), device.name, problem, valid.size());
  const std::size_t planned = request.budget ? std::min(*request.budget, valid.size()) : valid.size();
  observer.started(summary, planned);

  auto visited = [&](std::size_t index, const Config& config, const EvaluationResult& result) {
    ++summary.outcomes[std::string(to_string(result.outcome))];
    if (request.record_dir) recording.add(config, result);
    strategy->observe(index, result);
    if (better(result, summary.best)) summary.best = ConfigTiming{config, result.stats, result.error};
    if (index == default_index && result.outcome == Outcome::ok)
      summary.default_config = ConfigTiming{config, result.stats, result.error};
    summary.seconds = elapsed();
    observer.visited(summary, planned);
  };

  // The time limit is on time spent evaluating configs per device; reused results count with the
  // time they took when they were measured, so an identical rerun stops exactly where the first
  // run stopped and measures nothing new (on a GPU, which measures a later config first when an
  // earlier one still compiles, a rerun may measure the few configs the first run passed over).
  // N devices do N times the work in the same time.
  std::set<std::string> retried;  // keys of stored results measured again in this run
  // Claims: a config another tuner of this problem is measuring waits here (deferred) until its
  // result is recorded, then counts as reused; if that tuner dies, this one measures it.
  const std::string host = host_name();
  const double lease_s = request.config_timeout_s + task.setup_timeout_s + 60;
  struct ClaimsGuard {
    Store& store;
    ~ClaimsGuard() {
      try {
        store.release_claims();
      } catch (...) {  // never throw from a destructor; a claim left behind lapses with its process
      }
    }
  } claims_guard{store};
  std::deque<std::size_t> deferred;
  auto observe = [&](bool final) {
    for (ProposedConfig& p : order.ready(final)) visited(p.index, p.config, *p.result);
  };
  // Configs the budget already counts: measured, reused, in flight, or waiting on another tuner.
  auto counted = [&] { return summary.evaluated + summary.reused + pool.in_flight() + deferred.size(); };
  bool waiting_on_others = false;
  bool proposing = true;
  while (true) {
    // Hand out configs while a device is free; stop proposing once a limit is reached.
    waiting_on_others = false;
    bool blocked = false;
    while (proposing && pool.has_room()) {
      if (g_stop_requested.load()) break;  // handled below, also while waiting
      if (request.budget && deferred.empty() && counted() >= *request.budget) {
        summary.stop_reason = "budget of " + std::to_string(*request.budget) + " configs reached";
        proposing = false;
        break;
      }
      // A deferred config first, once the other tuner has recorded it or let go of it.
      std::optional<std::size_t> index;
      bool claimed = false;
      for (auto it = deferred.begin(); it != deferred.end(); ++it) {
        const std::string key = valid.config(*it).key();
        if (store.find_measurement(device_id, kernel_id, problem_id, key) ||
            (claimed = store.claim(device_id, kernel_id, problem_id, key, host, lease_s))) {
          index = *it;
          deferred.erase(it);
          break;
        }
      }
      if (!index && (!request.budget || counted() < *request.budget)) index = take_next();
      if (!index) {
        if (!deferred.empty()) {  // only configs others are measuring are left: wait for them
          waiting_on_others = true;
          break;
        }
        if (!exhausted && (!request.budget || counted() < *request.budget)) {
          blocked = true;  // the strategy waits on a result still being measured
          break;
        }
        summary.stop_reason = "space exhausted";
        proposing = false;
        break;
      }
      const Config config = valid.config(*index);
      // The start-up snapshot first; for a config it lacks, the database again: another tuner of
      // the same problem on the same database may have measured it meanwhile (one query, far
      // cheaper than measuring the config twice).
      auto found = stored.find(config.key());
      if (found == stored.end())
        if (auto fresh = store.find_measurement(device_id, kernel_id, problem_id, config.key()))
          found = stored.emplace(config.key(), std::move(*fresh)).first;
      if (measured_first.erase(config.key()) > 0) {
        order.result(*index, found->second.result);
        observe(false);
        continue;
      }
      const bool retry = found != stored.end() && (worth_retrying(found->second.result, request.config_timeout_s) ||
                                                   measured_less_strictly(found->second.result, request));
      if (found != stored.end() && !retry) {
        ++summary.reused;
        spent_seconds += found->second.result.environment.value("evaluation_seconds", 0.0);
        order.result(*index, found->second.result);
        observe(false);
        continue;
      }
      if (request.time_limit_s && spent_seconds / std::max<std::size_t>(1, pool.devices_in_use()) >= *request.time_limit_s) {
        summary.stop_reason = "time limit reached";
        proposing = false;
        break;
      }
      if (!claimed && !store.claim(device_id, kernel_id, problem_id, config.key(), host, lease_s, retry)) {
        deferred.push_back(*index);  // another tuner is measuring it
        continue;
      }
      if (retry) retried.insert(config.key());
      observe(false);
      // Racing: a config clearly slower than the best so far stops once it has its minimum samples.
      const double race_ns = request.race && summary.best ? summary.best->stats.median_ns : 0.0;
      pool.submit(EvaluationJob{next_job_id++, *index, config, launch_geometry(in.space, config, context), race_ns});
    }
    if (!summary.interrupted && g_stop_requested.load()) {  // also after the last config was proposed
      // Configs already measuring finish and are recorded if they do within kStopGraceSeconds
      // (stop_request.hpp), else they are dropped; those still waiting are dropped.
      summary.interrupted = true;
      summary.stop_reason = "interrupted";
      proposing = false;
      pool.cancel_pending();
    }
    if (!proposing) observe(true);
    if (pool.in_flight() == 0) {
      if (!proposing) break;
      if (blocked) observe(true);  // nothing left to wait for: what has come is observed
      if (waiting_on_others) std::this_thread::sleep_for(std::chrono::milliseconds(100));
      if (pool.devices_in_use() == 0)
        throw BackendUnavailable("every device of this tune was lost; the results so far are in the database, "
                                 "and rerunning the tune resumes from them");
      continue;  // only reused configs so far; propose again
    }
    FinishedEvaluation done = pool.wait();
    if (done.abandoned) {  // cut short by the stop: not recorded (its claim goes), a rerun measures it
      ++summary.dropped_at_stop;
      continue;
    }
    spent_seconds += done.evaluation_seconds;
    record(done, retried.erase(done.job.config.key()) > 0);
    order.result(done.job.index, std::move(done.result));
    observe(!proposing);
  }
  for (ProposedConfig& p : order.rest()) visited(p.index, p.config, *p.result);
  pool.end();
  pool_task.ended = true;
  summary.lost = pool.losses();
  summary.seconds = elapsed();
  summary.device_use = device_use.over(summary.seconds);
  // The measurements are stored: a recording that cannot be written (a full disk) is reported,
  // and does not make the run a failed one.
  if (request.record_dir) {
    try {
      summary.recorded_files = save_recording(recording, *request.record_dir, request.backend, problem);
    } catch (const KtuneError& e) {
      summary.record_error = e.what();
    }
  }
  run_guard.finish(summary.interrupted ? "interrupted" : "finished", summary.device_use);
  observer.finished(summary);
  return summary;
}

}  // namespace

std::vector<TuneSummary> run_tune(const TuneRequest& request, TuneDevices& devices, TuneObserver& observer) {
  const KernelFamily& family = find_family(request.family);
  require_backend_built(request.backend);
  if (request.backend != devices.backend())
    throw InputError("the tune is on " + request.backend + " but its devices are " + devices.backend() + " devices");
  if (request.budget && *request.budget == 0) throw InputError("--budget: must be at least 1");
  if (request.time_limit_s && *request.time_limit_s <= 0) throw InputError("--time-limit: must be positive");
  const Problem problem = family.make_problem(request.shape, request.precision);
  const std::string source_hash = kernel_source_hash(family, request.backend);
  const auto space_file = request.t1_spec.value_or(
      request.space_file.value_or(default_space_file(family.name(), request.backend)));
  const SearchSpace space = request.t1_spec ? load_t1_space(space_file) : SearchSpace::load(space_file);
  if (space.family() != family.name() || space.backend() != request.backend)
    throw InputError(space_file.string() + ": describes " + space.family() + " on " + space.backend() + ", not " +
                     family.name() + " on " + request.backend);
  check_strategy_name(request.strategy);  // before the device is opened
  require_backend_precision(request.backend, problem.precision);

  // The devices first: a missing backend or GPU must not leave a new database behind.
  EvaluationPool& pool = devices.open(kHelloTimeoutSeconds);
  const std::vector<PoolDevice> all_devices = pool.devices();
  std::vector<const DeviceInfo*> models;  // one tune per device model, each recorded as its own device
  for (const auto& fingerprint : pool.fingerprints())
    for (const auto& device : all_devices)
      if (device.info.fingerprint == fingerprint) {
        models.push_back(&device.info);
        break;
      }
  const TuneInputs inputs{request, family, problem, space, space_file, source_hash};
  // Each model's space, checked before the database is opened: a tune refused here leaves none
  // behind.
  std::vector<ValidConfigs> spaces;
  for (const DeviceInfo* device : models) {
    check_problem_fits(problem, family.byte_count(problem), *device);
    spaces.push_back(space.enumerate(make_context(problem, *device)));
    if (spaces.back().size() == 0)
      throw InputError(space_file.string() + ": no config satisfies the constraints for " + problem.describe() +
                       " on " + device->name + "; try another --shape or loosen the space's constraints "
                       "(`ktune space` shows how many configs are valid)");
  }
  Store store = Store::open(request.db);
  const std::size_t abandoned = store.abandon_dead_runs(host_name());
  std::vector<TuneSummary> summaries;
  for (std::size_t model = 0; model < models.size(); ++model) {
    summaries.push_back(tune_on_model(inputs, pool, *models[model], spaces[model], store, observer));
    summaries.back().abandoned_runs = model == 0 ? abandoned : 0;
    if (summaries.back().interrupted) break;
  }
  return summaries;
}

nlohmann::json run_compile_only(const TuneRequest& request, const std::string& arch, BuildEffort effort,
                                bool covering) {
  const auto start = std::chrono::steady_clock::now();
  const KernelFamily& family = find_family(request.family);
  require_backend_built(request.backend);
  const Problem problem = family.make_problem(request.shape, request.precision);
  kernel_source_hash(family, request.backend);  // InputError when the family has no such source
  require_backend_precision(request.backend, problem.precision);
  const auto space_file = request.t1_spec.value_or(
      request.space_file.value_or(default_space_file(family.name(), request.backend)));
  const SearchSpace space = request.t1_spec ? load_t1_space(space_file) : SearchSpace::load(space_file);
  const DeviceInfo device = nominal_device(request.backend, arch);
  const SpaceContext context = make_context(problem, device);
  const ValidConfigs valid = space.enumerate(context);
  const auto builder =
      make_variant_builder(request.backend, family, problem, arch, compile_threads(), effort, space.launch_only_names());
  if (!builder) throw InputError("--compile-only: the " + request.backend + " backend has no compile step");

  std::vector<std::size_t> selected;
  if (covering) {
    selected = covering_sample(valid, request.seed, space.launch_only_names());
  } else {
    selected.resize(valid.size());
    std::iota(selected.begin(), selected.end(), std::size_t{0});
  }
  for (std::size_t i : selected) builder->prefetch(i, valid.config(i));
  std::size_t compiled = 0, cached = 0;
  nlohmann::json failures = nlohmann::json::array();
  for (std::size_t i : selected) {
    const Config config = valid.config(i);
    const BuiltVariant built = builder->get(i, config);
    if (built.ok) {
      ++compiled;
      cached += built.build.compile_ms == 0;
    } else {
      failures.push_back({{"config", config.to_json()}, {"log", built.log}});
    }
    if (g_stop_requested.load()) break;
  }
  nlohmann::json problem_json = nlohmann::json::object();
  for (const auto& [name, value] : problem.dims) problem_json[name] = value;
  problem_json["precision"] = std::string(ktune::to_string(problem.precision));
  return {{"kernel", family.name()},
          {"backend", request.backend},
          {"arch", arch},
          {"fast_compile", effort == BuildEffort::fast_check},
          {"device", device.name},
          {"problem", problem_json},
          {"space", {{"total", valid.total()}, {"valid", valid.size()}, {"file", space_file.string()}}},
          {"sample", covering ? "covering" : "all"},
          {"selected", selected.size()},
          {"compiled", compiled},
          {"cached", cached},
          {"failed", failures.size()},
          {"failures", failures},
          {"seconds", std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()}};
}

}  // namespace ktune
