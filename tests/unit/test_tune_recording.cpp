// A tune recorded as a Kernel Tuner cache and T4 results reads back, in both formats, as the
// same replayable space: keys, times, failures, every parameter value and the space's size.
#include <gtest/gtest.h>

#include <filesystem>

#include "tuner/formats/kernel_tuner_cache.hpp"
#include "tuner/strategies/replay.hpp"
#include "tuner/tune/tune_recording.hpp"

namespace ktune {
namespace {

EvaluationResult timed(double median_ns, std::size_t samples) {
  EvaluationResult result;
  result.stats.median_ns = median_ns;
  result.stats.count = samples;
  for (std::size_t i = 0; i < samples; ++i) result.samples_ns.push_back(median_ns + static_cast<double>(i));
  result.error = 1e-7;
  return result;
}

TEST(TuneRecording, RoundTripsThroughBothFormats) {
  std::vector<Parameter> parameters{{"block", {Value{std::int64_t{64}}, Value{std::int64_t{128}}}, ""},
                                    {"mode", {Value{std::string("a")}, Value{std::string("b")}}, ""}};
  Problem problem;
  problem.family = "demo";
  problem.dims = {{"rows", 7}, {"cols", 1001}};
  TuneRecording recording(parameters, "demo", "Test GPU", problem, 6);  // 6 valid configs, 4 recorded
  const auto config = [](std::int64_t block, const char* mode) {
    Config c;
    c.values = {{"block", Value{block}}, {"mode", Value{std::string(mode)}}};
    return c;
  };
  recording.add(config(64, "a"), timed(2e6, 100));  // 2 ms, 100 samples: 32 kept
  recording.add(config(128, "a"), timed(1e6, 5));
  EvaluationResult failed;
  failed.outcome = Outcome::compile_error;
  failed.message = "error: bad";
  recording.add(config(64, "b"), failed);
  EvaluationResult wrong;
  wrong.outcome = Outcome::wrong_result;
  recording.add(config(128, "b"), wrong);
  ASSERT_EQ(recording.size(), 4u);

  const auto dir = std::filesystem::temp_directory_path() / ("ktune-recording-" + std::to_string(::getpid()));
  const auto files = save_recording(recording, dir, "cuda", problem);
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[0].filename(), "demo.cuda.rows7_cols1001.fp32.json.gz");
  EXPECT_EQ(files[1].filename(), "demo.cuda.rows7_cols1001.fp32_T4.json.gz");

  const KernelTunerCache cache = load_kernel_tuner_cache(files[0]);
  EXPECT_EQ(cache.device_name, "Test GPU");
  ASSERT_EQ(cache.records.size(), 4u);
  EXPECT_EQ(cache.records[0].key, "64,a");
  EXPECT_DOUBLE_EQ(*cache.records[0].time_ms, 2.0);
  EXPECT_EQ(cache.records[0].times_ms->size(), 32u);
  EXPECT_EQ(cache.records[1].times_ms->size(), 5u);
  EXPECT_EQ(cache.records[2].failure, KernelTunerFailure::compilation_failed);
  EXPECT_EQ(cache.records[3].failure, KernelTunerFailure::runtime_failed);

  for (const auto& file : files) {
    const ReplaySpace space = load_replay_space(file);
    ASSERT_EQ(space.valid.size(), 4u) << file;
    EXPECT_EQ(space.keys[1], "128,a") << file;
    EXPECT_DOUBLE_EQ(*space.time_ms[1], 1.0) << file;
    EXPECT_FALSE(space.time_ms[2].has_value()) << file;
    EXPECT_EQ(space.recorded_result(2).outcome, Outcome::compile_error) << file;
    EXPECT_EQ(space.space_configs, 6u) << file;
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ktune
