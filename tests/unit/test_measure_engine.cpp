// The measurement engine (tuner/measure/engine.hpp) through a scripted device: the order of the
// sequence, batch sizes, samples queued past the stopping rule's decision, device time, and how a
// backend's failures become outcomes (the same classification on every backend).
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "tuner/measure/engine.hpp"

namespace ktune {
namespace {

class OneOutputFamily final : public KernelFamily {
 public:
  std::string name() const override { return "one_output"; }
  std::string summary() const override { return "y = x"; }
  std::vector<DimSpec> dims() const override { return {{"n", 4, "elements"}}; }
  std::vector<Precision> precisions() const override { return {Precision::fp32}; }
  std::vector<TensorSpec> tensors(const Problem&) const override { return {{"x", 4, false}, {"y", 4, true}}; }
  double flop_count(const Problem&) const override { return 0; }
  void reference(const Problem&, HostTensors& tensors) const override { tensors[1] = tensors[0]; }
  bool memory_bound() const override { return memory_bound_; }
  void keep_reference(const Problem&, const std::vector<std::string_view>& outputs) const override {
    kept = outputs.size();
  }
  bool memory_bound_ = true;
  mutable std::size_t kept = 0;
};

struct DeviceError : std::runtime_error {
  DeviceError(const std::string& what, bool sticky) : std::runtime_error(what), sticky(sticky) {}
  bool sticky;
};

// What the scripted device was asked, in order.
struct Script {
  std::vector<std::string> calls;
  std::vector<std::size_t> batches;
  float output = 1.0f;          // what the variant writes
  double sample_ns = 1000;      // every sample's time, after the first ones:
  std::vector<double> first_samples;
  double between_ns = 10;       // per sample
  bool fail_first_run = false;  // throws from run_poisoned
  bool fail_timing = false;     // throws from time()
  bool sticky = false;
  bool device_check = false;    // the outputs are judged on the device
  bool queues = true;
};

class ScriptedVariant final : public LoadedVariant {
 public:
  ScriptedVariant(Script& script, const HostTensors& expected) : script_(script), expected_(expected) {}
  void run_poisoned() override {
    script_.calls.push_back("run_poisoned");
    if (script_.fail_first_run) throw DeviceError("launch failed", script_.sticky);
    stored_ = script_.output;
  }
  std::optional<OutputCheck> check_on_device(const KernelFamily&, const Problem&) override {
    if (!script_.device_check) return std::nullopt;
    script_.calls.push_back("check_on_device");
    const double error = std::fabs(stored_ - 1.0);
    return OutputCheck{error, judge_error(error, 1e-5)};
  }
  std::vector<OutputCopy> read_outputs() override {
    script_.calls.push_back("read_outputs");
    copy_.assign(4, stored_);
    return {{reinterpret_cast<const char*>(copy_.data()), copy_.size() * sizeof(float), Precision::fp32, expected_[1]}};
  }
  void warm_up(int runs) override { script_.calls.push_back("warm_up " + std::to_string(runs)); }
  SampleBatch time(std::size_t count, bool flush) override {
    script_.calls.push_back(std::string("time") + (flush ? " flushed" : ""));
    script_.batches.push_back(count);
    if (script_.fail_timing) throw DeviceError("lost", script_.sticky);
    SampleBatch batch;
    for (std::size_t i = 0; i < count; ++i, ++timed_)
      batch.kernel_ns.push_back(timed_ < script_.first_samples.size() ? script_.first_samples[timed_] : script_.sample_ns);
    batch.between_ns = script_.between_ns * static_cast<double>(count);
    return batch;
  }
  bool queues_samples() const override { return script_.queues; }

 private:
  Script& script_;
  const HostTensors& expected_;
  float stored_ = 0;
  std::vector<float> copy_;
  std::size_t timed_ = 0;
};

class ScriptedTarget final : public MeasureTarget {
 public:
  explicit ScriptedTarget(Script& script) : script_(script) { expected_ = {{1, 1, 1, 1}, {1, 1, 1, 1}}; }
  void prepare_problem(const KernelFamily&, const Problem&, std::uint64_t) override { script_.calls.push_back("prepare"); }
  std::unique_ptr<LoadedVariant> load(const KernelFamily&, const Problem&, const Config& config, const VariantBuild&,
                                      EvaluationResult& result) override {
    script_.calls.push_back("load");
    if (config.has("unsupported")) {
      result.outcome = Outcome::unsupported;
      result.message = "not here";
      return nullptr;
    }
    return std::make_unique<ScriptedVariant>(script_, expected_);
  }
  std::optional<DeviceFault> fault(std::exception_ptr error, MeasurePhase phase) const override {
    try {
      std::rethrow_exception(error);
    } catch (const DeviceError& e) {
      if (e.sticky) return DeviceFault{Outcome::crashed, e.what(), true};
      if (phase == MeasurePhase::first_run) return DeviceFault{Outcome::launch_error, e.what(), false};
      return std::nullopt;
    }
  }

 private:
  Script& script_;
  HostTensors expected_;
};

MeasureSettings quiet_settings() {
  MeasureSettings settings;
  settings.warmup_runs = 2;
  settings.stopping.min_samples = 10;
  settings.stopping.min_time_s = 0;
  settings.stopping.max_noise = 0.01;
  return settings;
}

EvaluationResult measure(Script& script, const MeasureSettings& settings, bool& healthy,
                         const OneOutputFamily& family = OneOutputFamily(), Config config = {}) {
  ScriptedTarget target(script);
  Problem problem;
  problem.family = "one_output";
  problem.precision = Precision::fp32;
  problem.dims = {{"n", 4}};
  return measure_variant(target, family, problem, config, VariantBuild{}, settings, healthy);
}

TEST(MeasureEngine, RunsTheSequenceInOrderAndStopsWhereTheRuleSays) {
  Script script;
  bool healthy = true;
  const EvaluationResult result = measure(script, quiet_settings(), healthy);
  ASSERT_EQ(result.outcome, Outcome::ok) << result.message;
  const std::vector<std::string> expected{"prepare", "load", "run_poisoned", "read_outputs", "warm_up 2", "time flushed"};
  EXPECT_EQ(script.calls, expected);
  // Identical samples: quiet at the minimum, so one batch of exactly min_samples.
  EXPECT_EQ(script.batches, std::vector<std::size_t>{10});
  EXPECT_EQ(result.samples_ns.size(), 10u);
  EXPECT_DOUBLE_EQ(result.stats.median_ns, 1000);
  EXPECT_NEAR(result.error, 0, 1e-12);
  // Device time: ten samples, plus the verification run and two warm-ups at the median.
  EXPECT_DOUBLE_EQ(result.device_time.kernel_ns, 13 * 1000.0);
  EXPECT_DOUBLE_EQ(result.device_time.between_ns, 10 * 10.0);
  EXPECT_EQ(result.environment["outputs_checked_on"], "host");
  EXPECT_EQ(result.environment["l2_flushed"], true);
  EXPECT_TRUE(result.environment["host_ms"].contains("timing"));
  EXPECT_TRUE(healthy);
}

TEST(MeasureEngine, SamplesQueuedPastTheDecisionCountAsDeviceTimeNotAsSamples) {
  Script script;
  script.first_samples = {1000, 3000, 1000};  // noisy first, then 1000 every time
  MeasureSettings settings = quiet_settings();
  settings.stopping.min_samples = 3;
  settings.stopping.max_noise = 0.5;  // reached at the 12th sample (0.495)
  settings.stopping.noise_window = 1000;
  bool healthy = true;
  const EvaluationResult result = measure(script, settings, healthy);
  ASSERT_EQ(result.outcome, Outcome::ok) << result.message;
  // The minimum first, then a batch of about 2 ms at the mean so far (capped at 256).
  EXPECT_EQ(script.batches, (std::vector<std::size_t>{3, 256}));
  EXPECT_EQ(result.samples_ns.size(), 12u) << result.message;
  EXPECT_DOUBLE_EQ(result.stats.median_ns, 1000);
  // Every queued sample is device time; the verification and warm-up runs count at the median.
  EXPECT_DOUBLE_EQ(result.device_time.kernel_ns, 5000 + 256 * 1000.0 + 3 * 1000.0);
  EXPECT_DOUBLE_EQ(result.device_time.between_ns, 259 * 10.0);
}

TEST(MeasureEngine, NeverQueuesPastTheSampleCap) {
  Script script;
  script.first_samples = {1000, 3000, 1000};
  MeasureSettings settings = quiet_settings();
  settings.stopping.min_samples = 3;
  settings.stopping.max_samples = 5;
  settings.stopping.max_noise = 0;
  settings.stopping.noise_window = 1000;
  bool healthy = true;
  const EvaluationResult result = measure(script, settings, healthy);
  ASSERT_EQ(result.outcome, Outcome::ok) << result.message;
  EXPECT_EQ(script.batches, (std::vector<std::size_t>{3, 2}));
  EXPECT_EQ(result.samples_ns.size(), 5u);
}

TEST(MeasureEngine, BatchSizeFollowsDeviceTime) {
  constexpr double kNoCap = 1e12;
  // A first probe of the minimum, at most 10, whatever the sample time.
  EXPECT_EQ(next_batch_size(0, 10, 10000, 0, kNoCap, true), 10u);
  EXPECT_EQ(next_batch_size(0, 3, 10000, 0, kNoCap, true), 3u);
  EXPECT_EQ(next_batch_size(0, 100000, 1000000, 0, kNoCap, true), 10u);
  // Then about 2 ms of device time a batch: 100 samples of 20 us, one of 5 ms, at most 256.
  EXPECT_EQ(next_batch_size(10, 10, 10000, 20e3, kNoCap, true), 100u);
  EXPECT_EQ(next_batch_size(4, 10, 10000, 5e6, kNoCap, true), 1u);
  EXPECT_EQ(next_batch_size(10, 10, 10000, 100, kNoCap, true), 256u);
  EXPECT_EQ(next_batch_size(10, 10, 7, 20e3, kNoCap, true), 7u);  // never past the sample cap
  EXPECT_EQ(next_batch_size(10, 10, 10000, 20e3, 100e3, true), 5u);  // nor the time left
  // A device that times on the host (the CPU) is asked for one at a time.
  EXPECT_EQ(next_batch_size(0, 10, 10000, 0, kNoCap, false), 1u);
  EXPECT_EQ(next_batch_size(10, 10, 10000, 20e3, kNoCap, false), 1u);
  EXPECT_EQ(next_batch_size(10, 10, 0, 20e3, kNoCap, true), 0u);
}

TEST(MeasureEngine, AHugeMinimumUnderATimeCapStopsAtTheCap) {
  Script script;
  script.sample_ns = 1e6;  // 1 ms a sample
  MeasureSettings settings = quiet_settings();
  settings.stopping.min_samples = 100000;
  settings.stopping.max_noise = 0;
  settings.stopping.max_time_s = 0.05;
  bool healthy = true;
  const EvaluationResult result = measure(script, settings, healthy);
  ASSERT_EQ(result.outcome, Outcome::ok) << result.message;
  EXPECT_EQ(result.samples_ns.size(), 50u) << result.message;
  std::size_t queued = 0;
  for (std::size_t batch : script.batches) queued += batch;
  EXPECT_LE(queued, 52u);  // a batch at most one sample past the time left
}

TEST(MeasureEngine, AWrongResultJudgedOnTheDeviceIsNotTimed) {
  Script script;
  script.device_check = true;
  script.output = 2.0f;
  bool healthy = true;
  const EvaluationResult result = measure(script, quiet_settings(), healthy);
  EXPECT_EQ(result.outcome, Outcome::wrong_result);
  EXPECT_TRUE(result.samples_ns.empty());
  EXPECT_TRUE(script.batches.empty());
  EXPECT_EQ(result.environment["outputs_checked_on"], "device");
}

TEST(MeasureEngine, AWrongResultJudgedOnTheHostLosesItsTiming) {
  Script script;
  script.output = std::nanf("");
  bool healthy = true;
  const EvaluationResult result = measure(script, quiet_settings(), healthy);
  EXPECT_EQ(result.outcome, Outcome::wrong_result);
  EXPECT_NE(result.message.find("NaN"), std::string::npos) << result.message;
  EXPECT_TRUE(result.samples_ns.empty());
  EXPECT_TRUE(std::isnan(result.error));
}

TEST(MeasureEngine, AFailingFirstRunIsALaunchErrorAndTheDeviceStaysHealthy) {
  Script script;
  script.fail_first_run = true;
  bool healthy = true;
  const EvaluationResult result = measure(script, quiet_settings(), healthy);
  EXPECT_EQ(result.outcome, Outcome::launch_error);
  EXPECT_EQ(result.message, "launch failed");
  EXPECT_TRUE(healthy);
}

TEST(MeasureEngine, AStickyFaultCrashesTheConfigAndTakesTheDeviceOut) {
  Script script;
  script.fail_timing = true;
  script.sticky = true;
  bool healthy = true;
  const EvaluationResult result = measure(script, quiet_settings(), healthy);
  EXPECT_EQ(result.outcome, Outcome::crashed);
  EXPECT_TRUE(result.samples_ns.empty());
  EXPECT_FALSE(healthy);
}

TEST(MeasureEngine, ANonStickyFailureWhileTimingIsTheHarnesssAndRethrown) {
  Script script;
  script.fail_timing = true;
  bool healthy = true;
  EXPECT_THROW(measure(script, quiet_settings(), healthy), DeviceError);
}

TEST(MeasureEngine, AVariantTheBackendRefusesKeepsItsOutcome) {
  Script script;
  bool healthy = true;
  Config config;
  config.values.emplace_back("unsupported", Value(std::int64_t{1}));
  const EvaluationResult result = measure(script, quiet_settings(), healthy, OneOutputFamily(), config);
  EXPECT_EQ(result.outcome, Outcome::unsupported);
  EXPECT_EQ(script.calls, (std::vector<std::string>{"prepare", "load"}));
}

TEST(MeasureEngine, CapturedReferenceIsKeptAndNotChecked) {
  Script script;
  script.output = 5.0f;  // far from the family's reference: not checked while captured
  MeasureSettings settings = quiet_settings();
  settings.capture_reference = true;
  OneOutputFamily family;
  family.memory_bound_ = false;
  bool healthy = true;
  const EvaluationResult result = measure(script, settings, healthy, family);
  ASSERT_EQ(result.outcome, Outcome::ok) << result.message;
  EXPECT_EQ(family.kept, 1u);
  EXPECT_EQ(result.environment["outputs_checked_on"], "none");
  EXPECT_EQ(result.environment["l2_flushed"], false);
  EXPECT_NE(result.message.find("kept as the reference"), std::string::npos);
}

}  // namespace
}  // namespace ktune
