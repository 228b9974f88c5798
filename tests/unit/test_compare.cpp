// Pairing and verdicts of `ktune compare` on hand-made samples.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "tuner/bench/compare.hpp"

namespace ktune {
namespace {

BenchmarkSamples benchmark(const std::string& name, std::vector<double> samples_ns, const std::string& error = "") {
  BenchmarkSamples b;
  b.name = name;
  b.real_time_ns = std::move(samples_ns);
  b.error_message = error;
  return b;
}

BenchmarkFile file_of(std::vector<BenchmarkSamples> benchmarks) {
  BenchmarkFile file;
  file.source = "test.json";
  file.benchmarks = std::move(benchmarks);
  return file;
}

// Five repetitions around `median` with a spread of about 1%.
std::vector<double> around(double median) {
  return {median * 0.99, median * 0.995, median, median * 1.005, median * 1.01};
}

BenchmarkComparison compare_one(std::vector<double> old_ns, std::vector<double> new_ns, ComparisonCriteria criteria = {}) {
  const ComparisonReport report =
      compare_benchmarks(file_of({benchmark("b", std::move(old_ns))}), file_of({benchmark("b", std::move(new_ns))}), criteria);
  EXPECT_EQ(report.pairs.size(), 1u);
  return report.pairs.at(0);
}

TEST(Compare, ClearRegressionAndImprovement) {
  const BenchmarkComparison slower = compare_one(around(100), around(120));
  EXPECT_EQ(slower.verdict, Verdict::regression);
  EXPECT_NEAR(slower.change, 0.2, 1e-12);
  EXPECT_DOUBLE_EQ(slower.base_median_ns, 100);
  EXPECT_DOUBLE_EQ(slower.new_median_ns, 120);
  EXPECT_NEAR(slower.p_value, 0.007936507936507936, 1e-12);  // fully separated 5 vs 5, exact
  EXPECT_TRUE(slower.significance_tested);

  const BenchmarkComparison faster = compare_one(around(100), around(80));
  EXPECT_EQ(faster.verdict, Verdict::improvement);
  EXPECT_NEAR(faster.change, -0.2, 1e-12);
}

TEST(Compare, SignificantButSmallChangesAreTheSame) {
  // Fully separated (p = 0.008) but only 2% slower: under the 5% threshold.
  const BenchmarkComparison pair = compare_one(around(100), around(102));
  EXPECT_LT(pair.p_value, 0.05);
  EXPECT_EQ(pair.verdict, Verdict::same);
  EXPECT_EQ(compare_one(around(100), around(102), {.threshold = 0.01, .alpha = 0.05}).verdict, Verdict::regression);
}

TEST(Compare, LargeButNoisyChangesAreTheSame) {
  // The medians differ by 10%, yet the samples overlap so much that the difference may be noise.
  const BenchmarkComparison pair = compare_one({100, 60, 140, 90, 130}, {110, 70, 150, 80, 120});
  EXPECT_NEAR(pair.change, 0.1, 1e-12);
  EXPECT_GT(pair.p_value, 0.05);
  EXPECT_EQ(pair.verdict, Verdict::same);
}

TEST(Compare, TooFewRepetitionsAreJudgedByTheThresholdAlone) {
  const BenchmarkComparison single = compare_one({100}, {120});
  EXPECT_FALSE(single.significance_tested);
  EXPECT_EQ(single.verdict, Verdict::regression);
  EXPECT_EQ(compare_one({100}, {103}).verdict, Verdict::same);
  // Three a side can reach p = 0.1 at best: no outcome is significant at alpha = 0.05.
  const BenchmarkComparison three = compare_one({100, 101, 99}, {90, 91, 89});
  EXPECT_FALSE(three.significance_tested);
  EXPECT_EQ(three.verdict, Verdict::improvement);
  // ... but at alpha = 0.2 the test decides.
  const BenchmarkComparison three_loose = compare_one({100, 101, 99}, {90, 91, 89}, {.threshold = 0.05, .alpha = 0.2});
  EXPECT_TRUE(three_loose.significance_tested);
  EXPECT_EQ(three_loose.verdict, Verdict::improvement);
  // Four a side suffice at alpha = 0.05.
  EXPECT_TRUE(compare_one({100, 101, 99, 102}, {90, 91, 89, 92}).significance_tested);
}

TEST(Compare, ChangeFromZero) {
  EXPECT_TRUE(std::isinf(compare_one({0}, {1}).change));
  EXPECT_EQ(compare_one({0}, {1}).verdict, Verdict::regression);
  EXPECT_DOUBLE_EQ(compare_one({0, 0}, {0, 0}).change, 0);
}

TEST(Compare, NewMissingAndUnmeasuredBenchmarksAreListed) {
  const BenchmarkFile base = file_of({benchmark("kept", around(10)), benchmark("gone", around(10)),
                                      benchmark("broke", around(10)), benchmark("was_broken", {}, "error: no device")});
  const BenchmarkFile current = file_of({benchmark("added", around(10)), benchmark("kept", around(10)),
                                         benchmark("broke", {}, "error: out of memory"), benchmark("was_broken", around(10))});
  const ComparisonReport report = compare_benchmarks(base, current, {});
  ASSERT_EQ(report.pairs.size(), 1u);
  EXPECT_EQ(report.pairs[0].name, "kept");
  EXPECT_EQ(report.pairs[0].verdict, Verdict::same);
  EXPECT_EQ(report.only_in_new, (std::vector<std::string>{"added"}));
  EXPECT_EQ(report.only_in_base, (std::vector<std::string>{"gone"}));
  ASSERT_EQ(report.unmeasured.size(), 2u);
  EXPECT_EQ(report.unmeasured[0].name, "broke");
  EXPECT_EQ(report.unmeasured[0].base_error, "");
  EXPECT_EQ(report.unmeasured[0].new_error, "error: out of memory");
  EXPECT_EQ(report.unmeasured[1].base_error, "error: no device");
  EXPECT_EQ(report.count(Verdict::same), 1u);
  EXPECT_EQ(report.count(Verdict::regression), 0u);
}

TEST(Compare, RefusesCriteriaOutOfRange) {
  const BenchmarkFile empty = file_of({});
  EXPECT_THROW(compare_benchmarks(empty, empty, {.threshold = -0.1, .alpha = 0.05}), std::invalid_argument);
  EXPECT_THROW(compare_benchmarks(empty, empty, {.threshold = NAN, .alpha = 0.05}), std::invalid_argument);
  EXPECT_THROW(compare_benchmarks(empty, empty, {.threshold = 0.05, .alpha = 0}), std::invalid_argument);
  EXPECT_THROW(compare_benchmarks(empty, empty, {.threshold = 0.05, .alpha = 1.5}), std::invalid_argument);
  EXPECT_NO_THROW(compare_benchmarks(empty, empty, {.threshold = 0, .alpha = 1}));
}

TEST(DeviceDifferences, ComparesTheDeviceWhenBothContextsNameOne) {
  const nlohmann::json h100 = {{"backend", "cuda"},
                               {"device", "NVIDIA H100"},
                               {"device_fingerprint", "cuda|H100|sm_90"},
                               {"host_name", "runner-1"}};
  nlohmann::json a100 = h100;
  a100["device"] = "NVIDIA A100";
  a100["device_fingerprint"] = "cuda|A100|sm_80";
  const std::vector<ContextDifference> differences = device_differences(h100, a100);
  ASSERT_EQ(differences.size(), 2u);
  EXPECT_EQ(differences[0].field, "device");
  EXPECT_EQ(differences[0].base_value, "NVIDIA H100");
  EXPECT_EQ(differences[0].new_value, "NVIDIA A100");
  EXPECT_EQ(differences[1].field, "device_fingerprint");

  // The same GPU model on another host times alike: no difference.
  nlohmann::json other_host = h100;
  other_host["host_name"] = "runner-2";
  EXPECT_TRUE(device_differences(h100, other_host).empty());
  // A newer driver changes the fingerprint alone.
  nlohmann::json new_driver = h100;
  new_driver["device_fingerprint"] = "cuda|H100|sm_90|driver 2";
  EXPECT_EQ(device_differences(h100, new_driver).size(), 1u);
}

TEST(DeviceDifferences, FallsBackToTheHostAndIgnoresWhatOneSideLacks) {
  const nlohmann::json laptop = {{"host_name", "laptop"}, {"num_cpus", 8}};
  const nlohmann::json server = {{"host_name", "server"}, {"num_cpus", 64}};
  const std::vector<ContextDifference> differences = device_differences(laptop, server);
  ASSERT_EQ(differences.size(), 1u);
  EXPECT_EQ(differences[0].field, "host_name");
  // Only one side names a device: the hosts are compared, and a field one side lacks is unknown, not different.
  EXPECT_EQ(device_differences({{"device", "NVIDIA H100"}, {"host_name", "laptop"}}, laptop).size(), 0u);
  EXPECT_TRUE(device_differences(laptop, nlohmann::json::object()).empty());
  EXPECT_TRUE(device_differences(laptop, {{"host_name", ""}}).empty());
  EXPECT_TRUE(device_differences(nlohmann::json::object(), nlohmann::json::object()).empty());
}

}  // namespace
}  // namespace ktune
