// The Google Benchmark JSON reader: real output of the library, older and aggregate-only
// layouts, and malformed files (InputError naming the file and the benchmark or member).
#include <gtest/gtest.h>

#include <filesystem>
#include <initializer_list>
#include <string>

#include "tuner/bench/benchmark_json.hpp"
#include "tuner/core/errors.hpp"

namespace ktune {
namespace {

// Written by Google Benchmark 1.7.1 (Debian 12's libbenchmark-dev) running
// tests/data/google_benchmark_sample.cpp; that file says how.
const std::filesystem::path kRealOutput = std::filesystem::path(KTUNE_SOURCE_DIR) / "tests/data/google_benchmark_1.7.1.json";

// One iteration entry as Google Benchmark writes it, with the members that matter here.
std::string iteration(const std::string& name, double real_time, const std::string& unit = "ns") {
  return R"({"name": ")" + name + R"(", "run_name": ")" + name + R"(", "run_type": "iteration", "repetitions": 1,
             "repetition_index": 0, "threads": 1, "iterations": 1000, "real_time": )" +
         std::to_string(real_time) + R"(, "cpu_time": 1.0, "time_unit": ")" + unit + R"("})";
}

std::string file_of(const std::string& entries) {
  return R"({"context": {"date": "2026-01-01T00:00:00+00:00", "host_name": "ci"}, "benchmarks": [)" + entries + "]}";
}

void expect_input_error(const std::string& text, std::initializer_list<const char*> fragments) {
  try {
    parse_benchmark_json(text, "run.json");
    ADD_FAILURE() << "no InputError for: " << text;
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.rfind("run.json: ", 0), 0u) << "the message must start with the file: " << message;
    for (const char* fragment : fragments) EXPECT_NE(message.find(fragment), std::string::npos) << message;
  }
}

TEST(BenchmarkJson, ReadsRealGoogleBenchmarkOutput) {
  const BenchmarkFile file = load_benchmark_json(kRealOutput);
  EXPECT_EQ(file.source, kRealOutput.string());
  EXPECT_EQ(file.context.at("library_build_type"), "debug");
  // BM_Accumulate's complexity fit (BigO, RMS entries under run_name "BM_Accumulate") is no timing.
  ASSERT_EQ(file.benchmarks.size(), 4u);
  EXPECT_EQ(file.find("BM_Accumulate"), nullptr);

  const BenchmarkSamples& small = file.benchmarks[0];
  EXPECT_EQ(small.name, "BM_Accumulate/256");
  ASSERT_EQ(small.real_time_ns.size(), 3u);  // three repetitions; mean/median/stddev/cv are not samples
  EXPECT_DOUBLE_EQ(small.real_time_ns[0], 170.76803479441526);
  EXPECT_DOUBLE_EQ(small.real_time_ns[1], 132.26134346401108);
  EXPECT_DOUBLE_EQ(small.real_time_ns[2], 173.63671912832086);
  EXPECT_FALSE(small.from_mean_aggregate);
  EXPECT_TRUE(small.error_message.empty());
  EXPECT_EQ(file.benchmarks[1].name, "BM_Accumulate/4096");

  const BenchmarkSamples* copy = file.find("BM_Copy/65536");  // written in microseconds
  ASSERT_NE(copy, nullptr);
  ASSERT_EQ(copy->real_time_ns.size(), 3u);
  EXPECT_NEAR(copy->real_time_ns[0], 2002.1926009119744, 1e-9);

  const BenchmarkSamples* failed = file.find("BM_NeedsADevice");  // SkipWithError("no device")
  ASSERT_NE(failed, nullptr);
  EXPECT_TRUE(failed->real_time_ns.empty());
  EXPECT_EQ(failed->error_message, "error: no device");
}

TEST(BenchmarkJson, ConvertsEveryTimeUnitToNanoseconds) {
  const BenchmarkFile file = parse_benchmark_json(
      file_of(iteration("a", 2.5, "ns") + "," + iteration("b", 2.5, "us") + "," + iteration("c", 2.5, "ms") + "," +
              iteration("d", 2.5, "s")),
      "units.json");
  ASSERT_EQ(file.benchmarks.size(), 4u);
  EXPECT_DOUBLE_EQ(file.benchmarks[0].real_time_ns.at(0), 2.5);
  EXPECT_DOUBLE_EQ(file.benchmarks[1].real_time_ns.at(0), 2.5e3);
  EXPECT_DOUBLE_EQ(file.benchmarks[2].real_time_ns.at(0), 2.5e6);
  EXPECT_DOUBLE_EQ(file.benchmarks[3].real_time_ns.at(0), 2.5e9);
  EXPECT_EQ(file.context.at("host_name"), "ci");
}

TEST(BenchmarkJson, RepetitionsOfOneNameAreCollectedInFileOrder) {
  // --benchmark_enable_random_interleaving mixes the repetitions of different benchmarks.
  const BenchmarkFile file = parse_benchmark_json(
      file_of(iteration("x", 1) + "," + iteration("y", 10) + "," + iteration("x", 2) + "," + iteration("x", 3)),
      "interleaved.json");
  ASSERT_EQ(file.benchmarks.size(), 2u);
  EXPECT_EQ(file.benchmarks[0].real_time_ns, (std::vector<double>{1, 2, 3}));
  EXPECT_EQ(file.benchmarks[1].real_time_ns, (std::vector<double>{10}));
}

TEST(BenchmarkJson, AggregatesOnlyGiveTheMeanAsTheSingleSample) {
  // --benchmark_report_aggregates_only=true
  const BenchmarkFile file = parse_benchmark_json(R"({"benchmarks": [
      {"name": "BM_f_mean", "run_name": "BM_f", "run_type": "aggregate", "aggregate_name": "mean",
       "aggregate_unit": "time", "real_time": 12.0, "time_unit": "us"},
      {"name": "BM_f_median", "run_name": "BM_f", "run_type": "aggregate", "aggregate_name": "median",
       "aggregate_unit": "time", "real_time": 11.0, "time_unit": "us"},
      {"name": "BM_f_stddev", "run_name": "BM_f", "run_type": "aggregate", "aggregate_name": "stddev",
       "aggregate_unit": "time", "real_time": 0.5, "time_unit": "us"},
      {"name": "BM_f_cv", "run_name": "BM_f", "run_type": "aggregate", "aggregate_name": "cv",
       "aggregate_unit": "percentage", "real_time": 0.04, "time_unit": "us"}]})",
                                                  "aggregates.json");
  ASSERT_EQ(file.benchmarks.size(), 1u);
  EXPECT_EQ(file.benchmarks[0].name, "BM_f");
  EXPECT_EQ(file.benchmarks[0].real_time_ns, (std::vector<double>{12000}));
  EXPECT_TRUE(file.benchmarks[0].from_mean_aggregate);
}

TEST(BenchmarkJson, OlderFilesWithoutRunNameOrRunType) {
  // Before run_name and run_type existed, aggregates were told apart by aggregate_name.
  const BenchmarkFile file = parse_benchmark_json(R"({"benchmarks": [
      {"name": "BM_old", "iterations": 10, "real_time": 5, "cpu_time": 5, "time_unit": "ns"},
      {"name": "BM_old", "iterations": 10, "real_time": 6, "cpu_time": 6, "time_unit": "ns"},
      {"name": "BM_old_mean", "aggregate_name": "mean", "iterations": 2, "real_time": 5.5, "time_unit": "ns"}]})",
                                                  "old.json");
  ASSERT_EQ(file.benchmarks.size(), 1u);
  EXPECT_EQ(file.benchmarks[0].real_time_ns, (std::vector<double>{5, 6}));
}

TEST(BenchmarkJson, SkippedBenchmarksKeepTheirMessage) {
  // Newer Google Benchmark versions write SkipWithMessage as "skipped".
  const BenchmarkFile file = parse_benchmark_json(
      file_of(R"({"name": "BM_s", "run_name": "BM_s", "run_type": "iteration", "skipped": true,
                  "skip_message": "needs AVX-512", "iterations": 0, "real_time": 0, "time_unit": "ns"})"),
      "skipped.json");
  ASSERT_EQ(file.benchmarks.size(), 1u);
  EXPECT_TRUE(file.benchmarks[0].real_time_ns.empty());
  EXPECT_EQ(file.benchmarks[0].error_message, "skipped: needs AVX-512");
}

TEST(BenchmarkJson, NanAndInfinityAreOnlyFatalWhereTheyAreRead) {
  // Google Benchmark writes a NaN cv for a zero mean; that value is not needed.
  const BenchmarkFile file = parse_benchmark_json(
      R"({"context": {"note": "NaN and Infinity inside strings stay", "load": -Infinity},
          "benchmarks": [)" + iteration("z", 0) + R"(, {"name": "z_cv", "run_name": "z", "run_type": "aggregate",
              "aggregate_name": "cv", "aggregate_unit": "percentage", "real_time": -NaN, "time_unit": "ns",
              "big": Infinity}]})",
      "nan.json");
  ASSERT_EQ(file.benchmarks.size(), 1u);
  EXPECT_EQ(file.benchmarks[0].real_time_ns, (std::vector<double>{0}));
  EXPECT_EQ(file.context.at("note"), "NaN and Infinity inside strings stay");
  EXPECT_TRUE(file.context.at("load").is_null());
  expect_input_error(file_of(R"({"name": "BM_n", "run_type": "iteration", "real_time": NaN, "time_unit": "ns"})"),
                     {"benchmarks[0] (BM_n)", "\"real_time\" must be a number", "NaN"});
}

TEST(BenchmarkJson, MalformedDocumentsNameTheFile) {
  expect_input_error("", {"not valid JSON"});
  expect_input_error("{\"benchmarks\": [", {"not valid JSON"});
  expect_input_error("[1, 2]", {"expected Google Benchmark JSON", "an array"});
  expect_input_error(R"({"context": {}})", {"no \"benchmarks\" array"});
  expect_input_error(R"({"benchmarks": {"name": "x"}})", {"\"benchmarks\" must be an array"});
  expect_input_error(R"({"context": 3, "benchmarks": []})", {"\"context\" must be an object, got 3"});
  expect_input_error("{\"benchmarks\": [\"\xff\"]}", {"not valid JSON"});
  expect_input_error(R"({"benchmarks": [1e999]})", {"not valid JSON"});  // out of double's range
}

TEST(BenchmarkJson, MalformedEntriesNameTheBenchmarkAndMember) {
  expect_input_error(file_of(iteration("ok", 1) + ", 42"), {"benchmarks[1]", "expected an object, got 42"});
  expect_input_error(file_of(R"({"real_time": 1, "time_unit": "ns"})"), {"benchmarks[0]", "missing \"name\""});
  expect_input_error(file_of(R"({"name": 7})"), {"benchmarks[0]", "\"name\" must be a string, got 7"});
  expect_input_error(file_of(R"({"name": "BM_a", "time_unit": "ns"})"), {"(BM_a)", "missing \"real_time\""});
  expect_input_error(file_of(R"({"name": "BM_a", "real_time": "fast", "time_unit": "ns"})"),
                     {"(BM_a)", "\"real_time\" must be a number, got \"fast\""});
  expect_input_error(file_of(R"({"name": "BM_a", "real_time": -3, "time_unit": "ns"})"),
                     {"(BM_a)", "finite time >= 0, got -3"});
  expect_input_error(file_of(R"({"name": "BM_a", "real_time": 3})"), {"(BM_a)", "missing \"time_unit\""});
  expect_input_error(file_of(R"({"name": "BM_a", "real_time": 3, "time_unit": "ks"})"),
                     {"(BM_a)", "unknown \"time_unit\" \"ks\"; valid: ns, us, ms, s"});
  expect_input_error(file_of(R"({"name": "BM_a", "real_time": 1e300, "time_unit": "s"})"), {"(BM_a)", "too large"});
  expect_input_error(file_of(R"({"name": "BM_a", "run_type": "warmup", "real_time": 3, "time_unit": "ns"})"),
                     {"(BM_a)", "unknown \"run_type\" \"warmup\"; valid: iteration, aggregate"});
  expect_input_error(file_of(R"({"name": "BM_a", "error_occurred": "yes"})"),
                     {"(BM_a)", "\"error_occurred\" must be true or false"});
  expect_input_error(file_of(R"({"name": "BM_a", "run_type": "aggregate", "aggregate_name": "mean",
                                 "real_time": [1], "time_unit": "ns"})"),
                     {"(BM_a)", "\"real_time\" must be a number, got an array"});
}

TEST(BenchmarkJson, DeepNestingIsRefusedBeforeItCanOverflowTheStack) {
  // Found by fuzz_benchmark_json: a context nested 200000 levels deep overflowed the stack
  // when it was copied.
  const std::string deep = std::string(200000, '[') + std::string(200000, ']');
  expect_input_error(R"({"context": {"x": )" + deep + R"(}, "benchmarks": []})", {"nested more than 64 levels"});
  expect_input_error(R"({"benchmarks": [)" + deep + "]}", {"nested more than 64 levels"});
  // Brackets inside strings do not count.
  const BenchmarkFile file =
      parse_benchmark_json(file_of(iteration(std::string(100, '['), 1)), "brackets.json");
  EXPECT_EQ(file.benchmarks.at(0).name, std::string(100, '['));
}

TEST(BenchmarkJson, LongValuesAreShortenedInMessages) {
  const std::string long_unit(500, 'u');
  try {
    parse_benchmark_json(file_of(R"({"name": "BM_a", "real_time": 3, "time_unit": ")" + long_unit + "\"}"), "run.json");
    ADD_FAILURE() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_LT(std::string(e.what()).size(), 200u) << e.what();
  }
}

TEST(BenchmarkJson, FilesThatCannotBeReadNameThePath) {
  const std::filesystem::path missing = std::filesystem::temp_directory_path() / "ktune-no-such-benchmark.json";
  try {
    load_benchmark_json(missing);
    ADD_FAILURE() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), missing.string() + ": no such file");
  }
  try {
    load_benchmark_json(std::filesystem::temp_directory_path());
    ADD_FAILURE() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("is a directory"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ktune
