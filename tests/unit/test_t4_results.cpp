// T4 results: hand-written documents, and the shared T4 file, which Kernel Tuner converted from
// the shared A100 convolution cache (the tests that read it skip when it is absent).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <string>

#include <unistd.h>

#include "tests/unit/input_error_expectations.hpp"
#include "tuner/core/errors.hpp"
#include "tuner/formats/data_file.hpp"
#include "tuner/formats/gzip.hpp"
#include "tuner/formats/kernel_tuner_cache.hpp"
#include "tuner/formats/t4_results.hpp"

namespace ktune {
namespace {

// json.dumps(..., indent=2) of two results: one measured, one that failed to compile.
const std::string kSmallT4 = R"({
  "metadata": {
    "timeunit": "miliseconds"
  },
  "results": [
    {
      "timestamp": "2025-01-01 10:00:00.000000+00:00",
      "configuration": {
        "block_size_x": 64,
        "scale": 0.5,
        "variant": "plain"
      },
      "times": {
        "compilation": 101.5,
        "framework": 1.25,
        "search_algorithm": 0,
        "validation": 0,
        "runtimes": [
          0.25,
          0.24
        ]
      },
      "invalidity": "correct",
      "correctness": 1,
      "measurements": [
        {
          "name": "time",
          "value": 0.245,
          "unit": "ms"
        },
        {
          "name": "power",
          "value": [
            250.0,
            251.5
          ],
          "unit": "W"
        }
      ],
      "objectives": [
        "time"
      ]
    },
    {
      "configuration": {
        "block_size_x": 128,
        "scale": 1e-05,
        "variant": "unrolled"
      },
      "times": {
        "compilation": 90.0
      },
      "invalidity": "compile",
      "correctness": 0,
      "measurements": [],
      "objectives": [
        "time"
      ],
      "note": "kept"
    }
  ],
  "schema_version": "1.0.0"
})";

TEST(T4Results, ReadsAHandWrittenFile) {
  const T4Results t4 = read_t4_results(kSmallT4, "small_T4.json");
  EXPECT_EQ(t4.schema_version, "1.0.0");
  EXPECT_EQ(t4.metadata["timeunit"], "miliseconds");
  ASSERT_EQ(t4.results.size(), 2u);
  const T4Result& measured = t4.results[0];
  EXPECT_EQ(measured.timestamp, "2025-01-01 10:00:00.000000+00:00");
  EXPECT_EQ(measured.configuration.at("scale"), Value{0.5});
  EXPECT_EQ(measured.configuration.at("variant"), Value{std::string("plain")});
  EXPECT_EQ(measured.times.duration("compilation"), 101.5);
  EXPECT_EQ(measured.times.duration("validation"), 0.0);
  EXPECT_FALSE(measured.times.duration("benchmark"));
  EXPECT_EQ(measured.times.runtimes, (std::vector<double>{0.25, 0.24}));
  EXPECT_EQ(measured.invalidity, T4Invalidity::correct);
  EXPECT_EQ(measured.correctness, Value{std::int64_t{1}});
  ASSERT_NE(measured.measurement("power"), nullptr);
  EXPECT_EQ(measured.measurement("power")->unit, "W");
  EXPECT_EQ(measured.measurement("power")->value.size(), 2u);
  EXPECT_EQ(measured.objectives, (std::vector<std::string>{"time"}));

  const T4Result& failed = t4.results[1];
  EXPECT_FALSE(failed.timestamp);
  EXPECT_EQ(failed.invalidity, T4Invalidity::compile);
  EXPECT_FALSE(failed.times.runtimes);
  ASSERT_EQ(failed.other_members.size(), 1u);
  EXPECT_EQ(failed.other_members[0].first, "note");
}

TEST(T4Results, WritesTheSameTextBack) {
  const T4Results t4 = read_t4_results(kSmallT4, "small_T4.json");
  EXPECT_EQ(t4_results_text(t4), kSmallT4);
  EXPECT_EQ(read_t4_results(gzip(t4_results_text(t4)), "small_T4.json.gz"), t4);
}

TEST(T4Results, InvalidityNamesAndKtuneOutcomes) {
  for (T4Invalidity invalidity : {T4Invalidity::correct, T4Invalidity::compile, T4Invalidity::runtime,
                                  T4Invalidity::timeout, T4Invalidity::correctness, T4Invalidity::constraints})
    EXPECT_EQ(parse_t4_invalidity(to_string(invalidity)), invalidity);
  EXPECT_EQ(t4_invalidity(Outcome::ok), T4Invalidity::correct);
  EXPECT_EQ(t4_invalidity(Outcome::wrong_result), T4Invalidity::correctness);
  EXPECT_EQ(t4_invalidity(Outcome::compile_error), T4Invalidity::compile);
  EXPECT_EQ(t4_invalidity(Outcome::launch_error), T4Invalidity::runtime);
  EXPECT_EQ(t4_invalidity(Outcome::timeout), T4Invalidity::timeout);
  EXPECT_EQ(t4_invalidity(Outcome::crashed), T4Invalidity::runtime);
  EXPECT_EQ(t4_invalidity(Outcome::unsupported), T4Invalidity::constraints);
}

TEST(T4Results, ConvertsACacheAsKernelTunerDoes) {
  const std::string cache_text = R"({"device_name": "d", "kernel_name": "k", "problem_size": [8],
    "tune_params_keys": ["x"], "tune_params": {"x": [1, 2]}, "objective": "time",
    "cache": {"1": {"x": 1, "time": 2.5, "times": [2.5], "compile_time": 10.0, "verification_time": 0,
                    "benchmark_time": 1.0, "strategy_time": 0, "framework_time": 0.5, "timestamp": "t1"},
              "2": {"x": 2, "time": "InvalidConfig"}}})";
  const T4Results t4 = t4_from_kernel_tuner_cache(read_kernel_tuner_cache(cache_text, "small.json"));
  ASSERT_EQ(t4.results.size(), 2u);
  const T4Result& measured = t4.results[0];
  EXPECT_EQ(measured.timestamp, "t1");
  EXPECT_EQ(measured.times.durations,
            (std::vector<std::pair<std::string, Value>>{{"compilation", 10.0},
                                                         {"framework", 0.5},
                                                         {"search_algorithm", std::int64_t{0}},
                                                         {"validation", std::int64_t{0}}}));
  EXPECT_EQ(measured.measurement("time")->value, 2.5);
  EXPECT_EQ(measured.correctness, Value{std::int64_t{1}});
  const T4Result& invalid = t4.results[1];
  EXPECT_EQ(invalid.invalidity, T4Invalidity::constraints);
  EXPECT_EQ(invalid.correctness, Value{std::int64_t{0}});
  EXPECT_EQ(invalid.measurement("time")->value, "InvalidConfig");
  EXPECT_TRUE(invalid.times.durations.empty());
}

TEST(T4Results, MalformedInputNamesFileResultAndMember) {
  const auto read = [](const std::string& text) { return error_of([&] { (void)read_t4_results(text, "bad_T4.json"); }); };
  EXPECT_MENTIONS(read("{"), "bad_T4.json: not valid JSON");
  EXPECT_MENTIONS(read(R"({"metadata": {}})"), "bad_T4.json: not T4 results (no \"results\" member)");
  EXPECT_MENTIONS(read(R"({"results": {}})"), "bad_T4.json: results: expected a list of results");
  const std::string valid = R"({"configuration": {"x": 1}, "times": {}, "invalidity": "correct", "correctness": 1})";
  EXPECT_MENTIONS(read(R"({"results": [)" + valid + R"(, {"configuration": {"x": 1}, "times": {}, "correctness": 1}]})"),
                  "bad_T4.json: results[1]: no \"invalidity\" member");
  {
    const std::string message =
        read(R"({"results": [{"configuration": {}, "times": {}, "invalidity": "slow", "correctness": 1}]})");
    EXPECT_MENTIONS(message, "results[0].invalidity: unknown invalidity \"slow\"");
    EXPECT_MENTIONS(message, "correct, compile, runtime, timeout, correctness, constraints");
  }
  EXPECT_MENTIONS(read(R"({"results": [{"configuration": {}, "times": {"runtimes": [1, "x"]}, "invalidity": "correct", "correctness": 1}]})"),
                  "results[0].times.runtimes[1]: expected a number, got a string");
  EXPECT_MENTIONS(read(R"({"results": [{"configuration": {"x": {}}, "times": {}, "invalidity": "correct", "correctness": 1}]})"),
                  "results[0].configuration.x: expected a number or a string, got an object");
  EXPECT_MENTIONS(read(R"({"results": [{"configuration": {}, "times": {}, "invalidity": "correct", "correctness": 1,
                                        "measurements": [{"name": "time", "value": {}}]}]})"),
                  "results[0].measurements[0].value: expected a number, a string or a list");
  EXPECT_MENTIONS(error_of([] { (void)load_t4_results("/nonexistent/results_T4.json"); }), "/nonexistent/results_T4.json");
}

// ---- the shared T4 file --------------------------------------------------------------------------

std::string shared_file(const std::string& name) {
  return std::string(KTUNE_SHARED_DATA_DIR) + "/kernel_tuner_caches/" + name;
}

bool shared_data_present(const std::string& name) { return std::ifstream(shared_file(name)).good(); }

#define SKIP_WITHOUT_SHARED(name) \
  if (!shared_data_present(name)) GTEST_SKIP() << "the shared file " << (name) << " is not beside this checkout"

TEST(T4ResultsShared, ReadsKernelTunersT4File) {
  SKIP_WITHOUT_SHARED("convolution_milo_A100_T4.json.gz");
  const T4Results t4 = load_t4_results(shared_file("convolution_milo_A100_T4.json.gz"));
  EXPECT_EQ(t4.schema_version, "1.0.0");
  // Counted with python3: json.load(gzip.open(FILE))['results'], by "invalidity".
  ASSERT_EQ(t4.results.size(), 4362u);
  std::map<std::string, std::size_t> by_invalidity;
  for (const auto& result : t4.results) ++by_invalidity[std::string(to_string(result.invalidity))];
  EXPECT_EQ(by_invalidity["correct"], 4201u);
  EXPECT_EQ(by_invalidity["runtime"], 155u);
  EXPECT_EQ(by_invalidity["compile"], 6u);

  const T4Result& first = t4.results.front();
  EXPECT_EQ(first.configuration.get_int("block_size_x"), 16);
  EXPECT_EQ(first.configuration.values.size(), 10u);
  EXPECT_EQ(first.times.duration("compilation"), 918.5990339610726);
  EXPECT_EQ(first.times.runtimes->size(), 32u);
  EXPECT_EQ(first.measurement("time")->value, 3.8753279224038124);
  const T4Result& failed = t4.results[1932];
  EXPECT_EQ(failed.invalidity, T4Invalidity::compile);
  EXPECT_EQ(failed.measurement("time")->value, "CompilationFailedConfig");
  EXPECT_EQ(failed.correctness, Value{std::int64_t{0}});
}

TEST(T4ResultsShared, WriterReproducesTheFile) {
  SKIP_WITHOUT_SHARED("convolution_milo_A100_T4.json.gz");
  const std::string text = read_text_maybe_gzip(shared_file("convolution_milo_A100_T4.json.gz"));
  const T4Results t4 = read_t4_results(text, "T4.json");
  EXPECT_TRUE(t4_results_text(t4) == text) << "the written text differs from the shared file";

  const std::filesystem::path file =
      std::filesystem::temp_directory_path() / ("ktune_t4_" + std::to_string(::getpid()) + ".json.gz");
  save_t4_results(t4, file);
  EXPECT_TRUE(is_gzip(read_file_bytes(file, kMaxDecompressedBytes)));
  EXPECT_EQ(load_t4_results(file), t4);
  std::filesystem::remove(file);
}

TEST(T4ResultsShared, CacheConversionMatchesKernelTuners) {
  SKIP_WITHOUT_SHARED("convolution_milo_A100.json.gz");
  SKIP_WITHOUT_SHARED("convolution_milo_A100_T4.json.gz");
  const KernelTunerCache cache = load_kernel_tuner_cache(shared_file("convolution_milo_A100.json.gz"));
  const std::string converted = t4_results_text(t4_from_kernel_tuner_cache(cache));
  const std::string kernel_tuners = read_text_maybe_gzip(shared_file("convolution_milo_A100_T4.json.gz"));
  EXPECT_TRUE(converted == kernel_tuners) << "the conversion differs from Kernel Tuner's";
}

}  // namespace
}  // namespace ktune
