// The Google Benchmark JSON writer of `ktune bench`, checked through the reader that `ktune
// compare` uses: samples survive the round trip in nanoseconds, aggregates and counters carry the
// right values, a failed benchmark reads as unmeasured, and two written files compare as they should.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "tuner/bench/benchmark_json.hpp"
#include "tuner/bench/benchmark_json_writer.hpp"
#include "tuner/bench/bench_session.hpp"
#include "tuner/bench/compare.hpp"

namespace ktune {
namespace {

const nlohmann::json kContext = {{"host_name", "ci-runner"}, {"date", "2026-11-21T10:00:00+00:00"},
                                 {"backend", "cpu"}, {"device", "test cpu"}};

BenchmarkRecord record(const std::string& name, std::vector<double> repetitions_ns) {
  BenchmarkRecord r;
  r.name = name;
  r.label = "threads=1 (default)";
  r.iterations.assign(repetitions_ns.size(), 0);
  for (std::size_t i = 0; i < repetitions_ns.size(); ++i) r.iterations[i] = 100 + i;
  r.repetitions_ns = std::move(repetitions_ns);
  r.bytes = 1e6;
  r.flops = 2e6;
  return r;
}

// The file as `ktune compare` reads it: written as text, parsed back.
BenchmarkFile round_trip(const std::vector<BenchmarkRecord>& records, const std::string& source = "out.json") {
  return parse_benchmark_json(make_benchmark_json(kContext, records).dump(2), source);
}

// The entries of `json` whose "run_name" is `name` and whose "run_type" is `run_type`.
std::vector<nlohmann::json> entries_of(const nlohmann::json& json, const std::string& name, const std::string& run_type) {
  std::vector<nlohmann::json> found;
  for (const auto& entry : json.at("benchmarks"))
    if (entry.at("run_name") == name && entry.at("run_type") == run_type) found.push_back(entry);
  return found;
}

const nlohmann::json& aggregate(const std::vector<nlohmann::json>& aggregates, const std::string& which) {
  for (const auto& entry : aggregates)
    if (entry.at("aggregate_name") == which) return entry;
  ADD_FAILURE() << "no " << which << " aggregate";
  static const nlohmann::json none;
  return none;
}

// Rates are computed as bytes / (ns * 1e-9): equal to the last few bits.
void expect_close(double actual, double expected) { EXPECT_NEAR(actual, expected, std::abs(expected) * 1e-12); }

// `count` repetitions spread evenly over +-1% around `median`, in a scrambled order.
std::vector<double> spread(double median, int count) {
  std::vector<double> values;
  for (int i = 0; i < count; ++i) values.push_back(median * (0.99 + 0.02 * ((i * 5) % count) / (count - 1)));
  return values;
}

TEST(BenchmarkJsonWriter, SamplesReadBackInNanosecondsPerRepetition) {
  const std::vector<double> times{1234.5, 987.25, 1500.0, 1100.125, 3.0e6};
  const BenchmarkFile file = round_trip({record("rmsnorm/cpu/rows=64,cols=256/fp32", times)});
  ASSERT_EQ(file.benchmarks.size(), 1u);
  const BenchmarkSamples& samples = file.benchmarks[0];
  EXPECT_EQ(samples.name, "rmsnorm/cpu/rows=64,cols=256/fp32");
  EXPECT_FALSE(samples.from_mean_aggregate);
  EXPECT_TRUE(samples.error_message.empty()) << samples.error_message;
  ASSERT_EQ(samples.real_time_ns.size(), times.size());  // the aggregates are not samples
  for (std::size_t i = 0; i < times.size(); ++i) EXPECT_NEAR(samples.real_time_ns[i], times[i], times[i] * 1e-12) << i;
  EXPECT_EQ(file.context, kContext);
}

TEST(BenchmarkJsonWriter, OneIterationEntryPerRepetitionInGoogleBenchmarkLayout) {
  const std::vector<double> times{2000, 3000, 2500};
  const nlohmann::json json = make_benchmark_json(kContext, {record("a", {1, 2}), record("b", times)});
  const auto iterations = entries_of(json, "b", "iteration");
  ASSERT_EQ(iterations.size(), 3u);
  for (std::size_t r = 0; r < iterations.size(); ++r) {
    const nlohmann::json& entry = iterations[r];
    EXPECT_EQ(entry.at("name"), "b");
    EXPECT_EQ(entry.at("family_index"), 1);  // b is the second benchmark
    EXPECT_EQ(entry.at("repetitions"), 3);
    EXPECT_EQ(entry.at("repetition_index"), r);
    EXPECT_EQ(entry.at("iterations"), 100 + r);
    EXPECT_EQ(entry.at("time_unit"), "ns");
    EXPECT_DOUBLE_EQ(entry.at("real_time").get<double>(), times[r]);
    EXPECT_DOUBLE_EQ(entry.at("cpu_time").get<double>(), times[r]);
    EXPECT_EQ(entry.at("label"), "threads=1 (default)");
    EXPECT_FALSE(entry.contains("error_occurred"));
  }
  EXPECT_EQ(json.at("context"), kContext);
}

// An H200 reports a 3201 MHz memory clock and a 6016-bit bus: 4.8 TB/s at double data rate.
TEST(BenchmarkJsonWriter, PercentOfPeakBandwidthFromTheDevicesMemory) {
  DeviceInfo h200;
  h200.properties = {{"memory_clock_khz", 3201000}, {"memory_bus_width", 6016}};
  const auto peak = peak_memory_bandwidth(h200);
  ASSERT_TRUE(peak.has_value());
  EXPECT_NEAR(*peak, 4.814e12, 1e9);
  EXPECT_FALSE(peak_memory_bandwidth(DeviceInfo{}).has_value());  // a CPU reports no memory clock

  BenchmarkRecord half = record("half", {1000, 1000});
  half.bytes = 0.5 * *peak * 1e-6;  // moved in 1 us: half the peak
  half.peak_bytes_per_second = peak;
  const nlohmann::json json = make_benchmark_json(kContext, {half, record("unknown", {1000})});
  for (const auto& entry : json["benchmarks"]) {
    if (entry["run_name"] == "half" && entry.value("aggregate_name", "") != "stddev" &&
        entry.value("aggregate_name", "") != "cv")
      EXPECT_NEAR(entry.at("percent_of_peak_bandwidth").get<double>(), 50.0, 1e-9) << entry.dump();
    if (entry["run_name"] == "unknown") EXPECT_FALSE(entry.contains("percent_of_peak_bandwidth"));
  }
}

TEST(BenchmarkJsonWriter, AggregatesOnlyWithTwoOrMoreRepetitions) {
  const nlohmann::json one = make_benchmark_json(kContext, {record("single", {1000})});
  EXPECT_EQ(entries_of(one, "single", "iteration").size(), 1u);
  EXPECT_TRUE(entries_of(one, "single", "aggregate").empty());
  ASSERT_EQ(one.at("benchmarks").size(), 1u);

  const nlohmann::json two = make_benchmark_json(kContext, {record("pair", {1000, 3000})});
  const auto aggregates = entries_of(two, "pair", "aggregate");
  ASSERT_EQ(aggregates.size(), 4u);
  std::vector<std::string> names;
  for (const auto& entry : aggregates) names.push_back(entry.at("aggregate_name"));
  EXPECT_EQ(names, (std::vector<std::string>{"mean", "median", "stddev", "cv"}));
  // A single repetition still reads back as one sample.
  const BenchmarkFile file = parse_benchmark_json(one.dump(), "one.json");
  ASSERT_EQ(file.benchmarks.size(), 1u);
  ASSERT_EQ(file.benchmarks[0].real_time_ns.size(), 1u);
  EXPECT_NEAR(file.benchmarks[0].real_time_ns[0], 1000, 1e-9);
}

TEST(BenchmarkJsonWriter, AggregateValuesMatchTheRepetitions) {
  // Unsorted, even count: median is the mean of the middle two.
  const std::vector<double> times{400, 100, 300, 200};
  const nlohmann::json json = make_benchmark_json(kContext, {record("bm", times)});
  const auto aggregates = entries_of(json, "bm", "aggregate");
  const double mean = 250, stddev = std::sqrt((150.0 * 150 + 50 * 50 + 50 * 50 + 150 * 150) / 3);  // sample stddev
  for (const auto& entry : aggregates) {
    EXPECT_EQ(entry.at("name"), "bm_" + entry.at("aggregate_name").get<std::string>());
    EXPECT_EQ(entry.at("repetitions"), 4);
    EXPECT_EQ(entry.at("iterations"), 4);  // Google Benchmark: the number of repetitions aggregated
    EXPECT_EQ(entry.at("time_unit"), "ns");
  }
  EXPECT_DOUBLE_EQ(aggregate(aggregates, "mean").at("real_time").get<double>(), mean);
  EXPECT_DOUBLE_EQ(aggregate(aggregates, "median").at("real_time").get<double>(), 250.0);
  EXPECT_DOUBLE_EQ(aggregate(aggregates, "stddev").at("real_time").get<double>(), stddev);
  // cv is a fraction with aggregate_unit "percentage", as Google Benchmark writes it.
  const nlohmann::json& cv = aggregate(aggregates, "cv");
  EXPECT_EQ(cv.at("aggregate_unit"), "percentage");
  EXPECT_DOUBLE_EQ(cv.at("real_time").get<double>(), stddev / mean);
  for (const char* time_aggregate : {"mean", "median", "stddev"})
    EXPECT_EQ(aggregate(aggregates, time_aggregate).at("aggregate_unit"), "time") << time_aggregate;

  // Odd count, unsorted: the middle value.
  const auto odd = entries_of(make_benchmark_json(kContext, {record("odd", {300, 100, 250})}), "odd", "aggregate");
  EXPECT_DOUBLE_EQ(aggregate(odd, "median").at("real_time").get<double>(), 250.0);
  // Identical repetitions: no spread.
  const auto flat = entries_of(make_benchmark_json(kContext, {record("flat", {500, 500, 500})}), "flat", "aggregate");
  EXPECT_DOUBLE_EQ(aggregate(flat, "stddev").at("real_time").get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(aggregate(flat, "cv").at("real_time").get<double>(), 0.0);
}

TEST(BenchmarkJsonWriter, CountersFollowEachEntrysTime) {
  BenchmarkRecord tuned = record("tuned", {1000, 2000, 4000});  // 1e6 bytes and 2e6 flops per launch
  tuned.baseline_ns = 500;
  const nlohmann::json json = make_benchmark_json(kContext, {tuned, record("no_baseline", {1000, 1000})});
  const auto iterations = entries_of(json, "tuned", "iteration");
  ASSERT_EQ(iterations.size(), 3u);
  const double expected_percent[] = {50, 25, 12.5};  // baseline speed / this speed, in percent
  for (std::size_t r = 0; r < 3; ++r) {
    const double seconds = tuned.repetitions_ns[r] * 1e-9;
    SCOPED_TRACE(r);
    expect_close(iterations[r].at("bytes_per_second").get<double>(), 1e6 / seconds);
    expect_close(iterations[r].at("flops_per_second").get<double>(), 2e6 / seconds);
    expect_close(iterations[r].at("percent_of_baseline").get<double>(), expected_percent[r]);
  }
  expect_close(iterations[0].at("bytes_per_second").get<double>(), 1e12);  // 1 MB in 1 us
  const auto aggregates = entries_of(json, "tuned", "aggregate");
  expect_close(aggregate(aggregates, "median").at("percent_of_baseline").get<double>(), 25);
  expect_close(aggregate(aggregates, "median").at("bytes_per_second").get<double>(), 5e11);
  expect_close(aggregate(aggregates, "mean").at("bytes_per_second").get<double>(), 1e6 / (7000.0 / 3 * 1e-9));
  // A spread is not a time per launch: no rate for it.
  EXPECT_FALSE(aggregate(aggregates, "stddev").contains("bytes_per_second"));
  EXPECT_FALSE(aggregate(aggregates, "cv").contains("percent_of_baseline"));

  for (const auto& entry : json.at("benchmarks"))
    if (entry.at("run_name") == "no_baseline") {
      EXPECT_FALSE(entry.contains("percent_of_baseline")) << entry.dump();
      if (entry.at("run_type") == "iteration") expect_close(entry.at("flops_per_second").get<double>(), 2e12);
    }
}

TEST(BenchmarkJsonWriter, FailedBenchmarkIsAnErrorEntryTheReaderReportsAsUnmeasured) {
  BenchmarkRecord failed = record("swiglu/cpu/rows=64,cols=256/fp32", {1200});  // one repetition ran, then a failure
  failed.error_message = "wrong_result: relative error 0.3 > 1e-05";
  BenchmarkRecord none_ran = record("geglu/cpu/rows=64,cols=256/fp32", {});
  const nlohmann::json json =
      make_benchmark_json(kContext, {record("rmsnorm/cpu/rows=64,cols=256/fp32", {1000, 1100}), failed, none_ran});

  const auto failed_entries = entries_of(json, failed.name, "iteration");
  ASSERT_EQ(failed_entries.size(), 1u);
  EXPECT_EQ(failed_entries[0].at("error_occurred"), true);
  EXPECT_EQ(failed_entries[0].at("error_message"), failed.error_message);
  EXPECT_TRUE(entries_of(json, failed.name, "aggregate").empty());
  const auto none_entries = entries_of(json, none_ran.name, "iteration");
  ASSERT_EQ(none_entries.size(), 1u);
  EXPECT_EQ(none_entries[0].at("error_occurred"), true);
  EXPECT_EQ(none_entries[0].at("error_message"), "no repetition ran");

  const BenchmarkFile file = parse_benchmark_json(json.dump(), "new.json");
  const BenchmarkSamples* read = file.find(failed.name);
  ASSERT_NE(read, nullptr);
  EXPECT_TRUE(read->real_time_ns.empty());
  EXPECT_EQ(read->error_message, "error: " + failed.error_message);

  // Against a file where it was measured: unmeasured, with the error on the new side.
  const BenchmarkFile base = round_trip({record("rmsnorm/cpu/rows=64,cols=256/fp32", {1000, 1100}),
                                         record(failed.name, {1200, 1300}), record(none_ran.name, {900, 950})},
                                        "base.json");
  const ComparisonReport report = compare_benchmarks(base, file, {});
  ASSERT_EQ(report.pairs.size(), 1u);
  EXPECT_EQ(report.pairs[0].name, "rmsnorm/cpu/rows=64,cols=256/fp32");
  ASSERT_EQ(report.unmeasured.size(), 2u);
  EXPECT_EQ(report.unmeasured[0].name, failed.name);
  EXPECT_TRUE(report.unmeasured[0].base_error.empty());
  EXPECT_NE(report.unmeasured[0].new_error.find("relative error 0.3"), std::string::npos) << report.unmeasured[0].new_error;
  EXPECT_EQ(report.unmeasured[1].name, none_ran.name);
  EXPECT_NE(report.unmeasured[1].new_error.find("no repetition ran"), std::string::npos);
}

TEST(BenchmarkJsonWriter, CompareFindsAKnownRegressionBetweenTwoWrittenFiles) {
  const std::vector<double> base_times = spread(10000, 8);
  std::vector<double> slower;
  for (double t : base_times) slower.push_back(t * 1.2);
  const BenchmarkFile base = round_trip({record("rmsnorm/cpu/rows=64,cols=256/fp32", base_times),
                                         record("copy/cpu/n=16512/fp32", spread(1500, 8))},
                                        "base.json");
  const BenchmarkFile slow = round_trip({record("rmsnorm/cpu/rows=64,cols=256/fp32", slower),
                                         record("copy/cpu/n=16512/fp32", spread(1500, 8))},
                                        "new.json");

  const ComparisonReport report = compare_benchmarks(base, slow, {});
  ASSERT_EQ(report.pairs.size(), 2u);
  const BenchmarkComparison& rmsnorm = report.pairs[0];
  EXPECT_EQ(rmsnorm.name, "rmsnorm/cpu/rows=64,cols=256/fp32");
  EXPECT_EQ(rmsnorm.base_samples, 8u);
  EXPECT_EQ(rmsnorm.new_samples, 8u);
  EXPECT_NEAR(rmsnorm.change, 0.2, 1e-9);
  EXPECT_TRUE(rmsnorm.significance_tested);
  EXPECT_LT(rmsnorm.p_value, 0.05);
  EXPECT_EQ(rmsnorm.verdict, Verdict::regression);
  EXPECT_EQ(report.pairs[1].verdict, Verdict::same);
  EXPECT_EQ(report.count(Verdict::regression), 1u);

  // The other way round it is an improvement; a file against itself is the same throughout.
  EXPECT_EQ(compare_benchmarks(slow, base, {}).pairs[0].verdict, Verdict::improvement);
  const ComparisonReport same = compare_benchmarks(base, base, {});
  EXPECT_EQ(same.count(Verdict::same), 2u);
  EXPECT_DOUBLE_EQ(same.pairs[0].change, 0.0);
  EXPECT_TRUE(same.unmeasured.empty());
  EXPECT_TRUE(same.only_in_base.empty());
  EXPECT_TRUE(same.only_in_new.empty());
}

}  // namespace
}  // namespace ktune
