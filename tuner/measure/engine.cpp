#include "tuner/measure/engine.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <future>

#include "tuner/measure/stopping_rule.hpp"

namespace ktune {
namespace {

// A batch of about this much device time: long enough that the host's round trip between
// batches (tens of microseconds) is a small share of it, short enough that the samples queued
// past the stopping rule's decision waste little.
constexpr double kBatchDeviceNs = 2e6;
constexpr std::size_t kMaxBatch = 256;
// The first batch, before any sample's time is known: a user's --min-samples 100000 under a time
// cap must not queue 100000 launches at once.
constexpr std::size_t kFirstBatch = 10;

// What was measured before the failure is dropped: a failed config has no timing.
EvaluationResult failed(EvaluationResult result, const DeviceFault& fault) {
  result.outcome = fault.outcome;
  result.message = fault.message;
  result.samples_ns.clear();
  result.stats = {};
  return result;
}

}  // namespace

std::size_t next_batch_size(std::size_t taken, std::size_t min_samples, std::size_t remaining, double mean_sample_ns,
                            double time_left_ns, bool queues_samples) {
  if (remaining == 0) return 0;
  if (!queues_samples) return 1;
  if (taken == 0 || mean_sample_ns <= 0) return std::min(remaining, std::clamp<std::size_t>(min_samples, 1, kFirstBatch));
  double size = std::clamp(kBatchDeviceNs / mean_sample_ns, 1.0, static_cast<double>(kMaxBatch));
  if (time_left_ns > 0) size = std::min(size, std::max(1.0, std::ceil(time_left_ns / mean_sample_ns)));
  return std::min(static_cast<std::size_t>(size), remaining);
}

EvaluationResult measure_variant(MeasureTarget& target, const KernelFamily& family, const Problem& problem,
                                 const Config& config, const VariantBuild& build, const MeasureSettings& settings,
                                 bool& healthy) {
  EvaluationResult result;
  result.compile_ms = build.compile_ms;
  // Where the worker's time went, in ms: loading the variant, its first run, reading and checking
  // its outputs, warming up, timing, and waiting for the host's comparison after the timing.
  // Everything of a config's time that is not device time shows up here (or between configs).
  using Clock = std::chrono::steady_clock;
  auto mark = Clock::now();
  auto lap = [&](const char* phase) {
    const auto now = Clock::now();
    result.environment["host_ms"][phase] = std::chrono::duration<double, std::milli>(now - mark).count();
    mark = now;
  };
  // Set when a failure is judged the variant's; a sticky one also takes the device out.
  auto judge = [&](std::exception_ptr error, MeasurePhase phase) -> EvaluationResult {
    const std::optional<DeviceFault> fault = target.fault(error, phase);
    if (!fault) std::rethrow_exception(error);
    if (fault->sticky) healthy = false;
    return failed(std::move(result), *fault);
  };
  std::unique_ptr<LoadedVariant> variant;
  try {
    target.prepare_problem(family, problem, settings.seed);
    lap("prepare");
    variant = target.load(family, problem, config, build, result);
    lap("load");
    if (!variant) return result;
    variant->run_poisoned();
    lap("first_run");
  } catch (...) {
    return judge(std::current_exception(), MeasurePhase::first_run);
  }

  try {
    const bool verifies = !settings.capture_reference && family.verifies(problem);
    std::vector<StoredOutput> outputs;
    std::future<OutputCheck> checking;
    std::optional<OutputCheck> checked;
    // Judges the outputs of the last run: where they are when the backend can, else copied to the
    // host and compared there, while the device is timed when `overlap` and the host is idle then
    // (a config that fails the comparison loses its timing).
    auto check = [&](bool overlap) {
      if (verifies) checked = variant->check_on_device(family, problem);
      result.environment["outputs_checked_on"] = !verifies ? "none" : checked ? "device" : "host";
      if (!checked && (verifies || settings.capture_reference)) {
        std::vector<std::string_view> raw;
        for (const OutputCopy& copy : variant->read_outputs()) {
          outputs.push_back({copy.data, copy.precision, copy.expected});
          raw.emplace_back(copy.data, copy.bytes);
        }
        if (settings.capture_reference) family.keep_reference(problem, raw);
      }
      if (verifies && !checked) {
        if (overlap && variant->host_idle_while_timing())
          checking = std::async(std::launch::async, [&] { return check_outputs(family, problem, outputs); });
        else
          checked = check_outputs(family, problem, outputs);
      }
    };
    // While the problem's reference is still being computed (the first configs of a tune), the
    // variant is timed first and checked after: its outputs are then those of its last timed run,
    // which computed the same thing from the same (restored) inputs over the same poisoned
    // buffers, so an element no run writes is still caught.
    const bool deferred = verifies && variant->reference_pending();
    if (deferred) result.environment["checked_after_timing"] = true;
    else check(true);
    auto verdict = [&] {
      OutputCheck check = checked ? *checked : checking.valid() ? checking.get() : OutputCheck{-1.0, Verdict{true, ""}};
      if (settings.capture_reference) check.verdict.message = "kept as the reference of the other configs";
      result.error = check.error;
      return check.verdict;
    };
    // A check done before timing that already failed saves the timing.
    lap("outputs");
    if (checked && !checked->verdict.passed) {
      const Verdict failed_check = verdict();
      result.outcome = Outcome::wrong_result;
      result.message = failed_check.message;
      return result;
    }

    variant->warm_up(settings.warmup_runs);
    lap("warm_up");
    const bool flush = family.memory_bound();
    result.environment["before"] = variant->monitor();
    StoppingRule rule(settings.stopping);
    const std::size_t most = std::max<std::size_t>(settings.stopping.max_samples, 1);
    std::size_t taken = 0;
    // result.device_time holds only timed samples until the loop ends: the batch size follows
    // its mean (evictions included) and the time left counts the samples' own time.
    const DeviceTime& timed = result.device_time;
    while (!rule.done() && taken < most) {
      const double mean = taken == 0 ? 0 : (timed.kernel_ns + timed.between_ns) / static_cast<double>(taken);
      const double time_left = settings.stopping.max_time_s * 1e9 - timed.kernel_ns;
      const std::size_t count = next_batch_size(taken, settings.stopping.min_samples, most - taken, mean,
                                                std::max(time_left, 1.0), variant->queues_samples());
      const SampleBatch batch = variant->time(count, flush);
      result.device_time.between_ns += batch.between_ns;
      for (const double ns : batch.kernel_ns) {
        result.device_time.kernel_ns += ns;
        ++taken;
        if (rule.done()) continue;  // queued past the decision: device time, not a sample
        result.samples_ns.push_back(ns);
        rule.add(ns);
      }
    }
    lap("timing");
    result.environment["after"] = variant->monitor();
    if (deferred) {
      check(false);
      lap("reference_wait_and_check");
    }
    if (result.environment["before"].is_null()) {
      result.environment.erase("before");
      result.environment.erase("after");
    } else {
      // Throttling: the SM clock fell by more than 5% over the samples.
      const auto& before = result.environment["before"]["sm_clock_mhz"];
      const auto& after = result.environment["after"]["sm_clock_mhz"];
      if (before.is_number() && after.is_number())
        result.environment["throttled"] = after.get<double>() < 0.95 * before.get<double>();
    }
    result.environment["l2_flushed"] = flush;
    const Verdict judged = verdict();
    lap("check_wait");
    if (!judged.passed) {
      result.outcome = Outcome::wrong_result;
      result.message = judged.message;
      result.samples_ns.clear();
      return result;
    }
    result.stats = summarize(result.samples_ns);
    // The verification run and the warm-up runs were not timed: counted at the median.
    result.device_time.kernel_ns += result.stats.median_ns * (1 + std::max(settings.warmup_runs, 0));
    result.outcome = Outcome::ok;
    result.message = judged.message + "; " + rule.reason() + variant->note;
    return result;
  } catch (...) {
    return judge(std::current_exception(), MeasurePhase::measuring);
  }
}

}  // namespace ktune
