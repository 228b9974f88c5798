// Kernel Tuner cache files: small hand-written caches, and the real caches of ../shared/data
// (measured on A100 and A4000 GPUs; the tests that read them skip when they are absent).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <unistd.h>

#include "tests/unit/input_error_expectations.hpp"
#include "tuner/core/errors.hpp"
#include "tuner/formats/data_file.hpp"
#include "tuner/formats/gzip.hpp"
#include "tuner/formats/kernel_tuner_cache.hpp"

namespace ktune {
namespace {

// A cache as Kernel Tuner writes it: the header with indent="", one record per line. It mixes
// integer, real and string parameters, every error kind, a NaN metric and an observer's list.
const std::string kSmallCache = R"({
"device_name": "NVIDIA H200",
"kernel_name": "vector_add",
"problem_size": [
1000000
],
"tune_params_keys": [
"block_size_x",
"scale",
"variant"
],
"tune_params": {
"block_size_x": [
64,
128
],
"scale": [
0.5,
1e-05
],
"variant": [
"plain",
"unrolled"
]
},
"objective": "time",
"cache": {
"64,0.5,plain": {"block_size_x": 64, "scale": 0.5, "variant": "plain", "time": 0.25, "times": [0.25, 0.24, 0.26], "compile_time": 101.5, "verification_time": 0, "benchmark_time": 3.5, "GFLOP/s": NaN, "power_readings": [[0.1, 250.0], [0.2, 251.5]], "strategy_time": 0, "framework_time": 1.25, "timestamp": "2025-01-01 10:00:00.000000+00:00"},
"64,1e-05,plain": {"block_size_x": 64, "scale": 1e-05, "variant": "plain", "time": "CompilationFailedConfig", "compile_time": 90.0, "verification_time": 0, "benchmark_time": 0, "strategy_time": 0, "framework_time": 1.0, "timestamp": "2025-01-01 10:00:01.000000+00:00"},
"128,0.5,unrolled": {"block_size_x": 128, "scale": 0.5, "variant": "unrolled", "time": "RuntimeFailedConfig", "compile_time": 95.0, "verification_time": 0, "benchmark_time": 0.5, "strategy_time": 0, "framework_time": 1.0, "timestamp": "2025-01-01 10:00:02.000000+00:00"},
"128,1e-05,unrolled": {"block_size_x": 128, "scale": 1e-05, "variant": "unrolled", "time": "InvalidConfig"}}
})";

TEST(KernelTunerCache, ReadsAHandWrittenCache) {
  const KernelTunerCache cache = read_kernel_tuner_cache(kSmallCache, "small.json");
  EXPECT_EQ(cache.device_name, "NVIDIA H200");
  EXPECT_EQ(cache.kernel_name, "vector_add");
  EXPECT_EQ(cache.problem_size, (std::vector<Value>{std::int64_t{1000000}}));
  EXPECT_EQ(cache.tune_params_keys, (std::vector<std::string>{"block_size_x", "scale", "variant"}));
  ASSERT_EQ(cache.tune_params.size(), 3u);
  EXPECT_EQ(cache.tune_params[1].second, (std::vector<Value>{0.5, 1e-05}));
  EXPECT_EQ(cache.objective, "time");
  EXPECT_FALSE(cache.recovery);
  ASSERT_EQ(cache.records.size(), 4u);

  const KernelTunerRecord& measured = cache.records[0];
  EXPECT_EQ(measured.key, "64,0.5,plain");
  EXPECT_EQ(measured.config, (std::vector<Value>{std::int64_t{64}, 0.5, std::string("plain")}));
  EXPECT_EQ(measured.time_ms, 0.25);
  EXPECT_FALSE(measured.failure);
  EXPECT_EQ(measured.times_ms, (std::vector<double>{0.25, 0.24, 0.26}));
  EXPECT_EQ(measured.number("compile_time"), 101.5);
  EXPECT_EQ(measured.number("verification_time"), 0.0);
  EXPECT_TRUE(std::isnan(measured.number("GFLOP/s").value()));
  ASSERT_NE(measured.member("power_readings"), nullptr);
  EXPECT_EQ(measured.member("power_readings")->size(), 2u);
  EXPECT_EQ(measured.member("timestamp")->get<std::string>(), "2025-01-01 10:00:00.000000+00:00");
  const Config expected_config{{{"block_size_x", std::int64_t{64}}, {"scale", 0.5}, {"variant", std::string("plain")}}};
  EXPECT_TRUE(cache.config(measured) == expected_config) << cache.config(measured).describe();

  EXPECT_EQ(cache.records[1].failure, KernelTunerFailure::compilation_failed);
  EXPECT_FALSE(cache.records[1].time_ms);
  EXPECT_FALSE(cache.records[1].times_ms);
  EXPECT_EQ(cache.records[2].failure, KernelTunerFailure::runtime_failed);
  EXPECT_EQ(cache.records[3].failure, KernelTunerFailure::invalid_config);
  EXPECT_EQ(cache.find("128,0.5,unrolled"), &cache.records[2]);
  EXPECT_EQ(cache.find("1,2,3"), nullptr);
}

TEST(KernelTunerCache, WritesTheSameTextBack) {
  const KernelTunerCache cache = read_kernel_tuner_cache(kSmallCache, "small.json");
  EXPECT_EQ(kernel_tuner_cache_text(cache), kSmallCache);
}

TEST(KernelTunerCache, KeysAreJoinedAsPythonStrWritesValues) {
  EXPECT_EQ(kernel_tuner_key({std::int64_t{64}, 0.5, std::string("plain"), 1e-05, 1e16, 2.0, std::int64_t{-3}}),
            "64,0.5,plain,1e-05,1e+16,2.0,-3");
  EXPECT_EQ(kernel_tuner_key({}), "");
}

TEST(KernelTunerCache, FailureNames) {
  for (KernelTunerFailure failure : kAllKernelTunerFailures)
    EXPECT_EQ(parse_kernel_tuner_failure(to_string(failure)), failure);
  EXPECT_EQ(to_string(KernelTunerFailure::compilation_failed), "CompilationFailedConfig");
  EXPECT_FALSE(parse_kernel_tuner_failure("CompileFailedConfig"));
}

TEST(KernelTunerCache, FailureUnderAnotherObjectiveStaysWhereItWas) {
  // With objective GFLOP/s Kernel Tuner stores the error there and writes no time.
  const std::string text = R"({"device_name": "d", "kernel_name": "k", "problem_size": 4096,
    "tune_params_keys": ["x"], "tune_params": {"x": [1, 2, 3]}, "objective": "GFLOP/s", "schema_version": "1.0.0",
    "cache": {"1": {"x": 1, "GFLOP/s": "RuntimeFailedConfig", "compile_time": 1},
              "2": {"x": 2, "time": 1.5, "GFLOP/s": 12.5},
              "3": {"x": 3, "__error__": "InvalidConfig"}}})";
  const KernelTunerCache cache = read_kernel_tuner_cache(text, "gflops.json");
  EXPECT_EQ(cache.problem_size, (std::vector<Value>{std::int64_t{4096}}));
  ASSERT_EQ(cache.other_header_members.size(), 1u);
  EXPECT_EQ(cache.other_header_members[0].first, "schema_version");
  EXPECT_EQ(cache.records[0].failure, KernelTunerFailure::runtime_failed);
  EXPECT_EQ(cache.records[0].failure_member, "GFLOP/s");
  EXPECT_FALSE(cache.records[1].failure);
  EXPECT_EQ(cache.records[1].number("GFLOP/s"), 12.5);
  EXPECT_EQ(cache.records[2].failure, KernelTunerFailure::invalid_config);
  EXPECT_EQ(cache.records[2].failure_member, "__error__");

  // Written back, no "time" member appears where there was none, and it reads back the same.
  const std::string written = kernel_tuner_cache_text(cache);
  EXPECT_EQ(written.find("\"time\": \"RuntimeFailedConfig\""), std::string::npos) << written;
  EXPECT_EQ(read_kernel_tuner_cache(written, "written.json"), cache);
}

TEST(KernelTunerCache, RecoversAnInterruptedRun) {
  // Kernel Tuner's layout while it runs: header, `"cache": {`, then `\n"key": {...},` per record.
  const std::size_t cache_line = kSmallCache.find("\"cache\": {");
  const std::size_t header_end = kSmallCache.find('\n', cache_line);
  std::vector<std::string> lines;
  for (std::size_t start = header_end + 1; start < kSmallCache.size();) {
    const std::size_t end = std::min(kSmallCache.find('\n', start), kSmallCache.size());
    lines.push_back(kSmallCache.substr(start, end - start));
    start = end + 1;
  }
  ASSERT_EQ(lines.size(), 5u);  // 4 records, the closing "}"
  const std::string header = kSmallCache.substr(0, header_end);
  const std::string open_file = header + "\n" + lines[0] + "\n" + lines[1] + "\n" + lines[2];  // each ends with ","

  const KernelTunerCache full = read_kernel_tuner_cache(kSmallCache, "small.json");
  {
    const KernelTunerCache cache = read_kernel_tuner_cache(open_file, "open.json");
    ASSERT_TRUE(cache.recovery);
    EXPECT_EQ(cache.recovery->records_recovered, 3u);
    EXPECT_EQ(cache.recovery->bytes_dropped, 0u);
    ASSERT_EQ(cache.records.size(), 3u);
    EXPECT_EQ(cache.records[2], full.records[2]);
    EXPECT_EQ(cache.device_name, full.device_name);
  }
  {
    const std::string cut = open_file + "\n" + lines[3].substr(0, 40);  // killed while writing a line
    const KernelTunerCache cache = read_kernel_tuner_cache(cut, "cut.json");
    ASSERT_TRUE(cache.recovery);
    EXPECT_EQ(cache.recovery->records_recovered, 3u);
    EXPECT_EQ(cache.recovery->bytes_dropped, 40u);
    // Written again, the file is closed and complete.
    const KernelTunerCache closed = read_kernel_tuner_cache(kernel_tuner_cache_text(cache), "closed.json");
    EXPECT_FALSE(closed.recovery);
    // Compared as text: the first record's NaN metric is unequal to itself.
    EXPECT_EQ(kernel_tuner_cache_text(closed), kernel_tuner_cache_text(cache));
    EXPECT_EQ(closed.records.size(), 3u);
  }
  {
    const KernelTunerCache cache = read_kernel_tuner_cache(header, "header-only.json");
    ASSERT_TRUE(cache.recovery);
    EXPECT_EQ(cache.recovery->records_recovered, 0u);
    EXPECT_TRUE(cache.records.empty());
    EXPECT_EQ(cache.tune_params_keys, full.tune_params_keys);
  }
  {
    // Gzip-compressed, the same.
    const KernelTunerCache cache = read_kernel_tuner_cache(gzip(open_file), "open.json.gz");
    EXPECT_EQ(cache.records.size(), 3u);
  }
}

TEST(KernelTunerCache, DamageInsideAnOpenFileIsAnError) {
  const std::string header_and_first = kSmallCache.substr(0, kSmallCache.find("\n\"64,1e-05"));
  const std::string damaged = header_and_first + "\n\"64,1e-05,plain\": {\"block_size_x\": 64, \"sca" +
                              "\n\"128,0.5,unrolled\": {\"block_size_x\": 128, \"scale\": 0.5, \"variant\": \"x\", \"time\": 1.0},";
  const std::string message = error_of([&] { (void)read_kernel_tuner_cache(damaged, "damaged.json"); });
  EXPECT_MENTIONS(message, "damaged.json");
  EXPECT_MENTIONS(message, "line 29");
  EXPECT_MENTIONS(message, "record \"64,1e-05,plain\"");
}

TEST(KernelTunerCache, MalformedInputNamesFileRecordAndMember) {
  const auto read = [](const std::string& text) {
    return error_of([&] { (void)read_kernel_tuner_cache(text, "bad.json"); });
  };
  EXPECT_MENTIONS(read("hello"), "bad.json: not valid JSON");
  EXPECT_MENTIONS(read(""), "bad.json");
  EXPECT_MENTIONS(read("[1, 2]"), "bad.json: not a Kernel Tuner cache");
  EXPECT_MENTIONS(read(R"({"device_name": "d", "kernel_name": "k", "tune_params_keys": ["x"], "cache": {}})"),
                  "bad.json: not a Kernel Tuner cache (no \"tune_params\" member)");
  const std::string header =
      R"({"device_name": "d", "kernel_name": "k", "problem_size": [1], "tune_params_keys": ["x", "y"],
          "tune_params": {"x": [1], "y": [2]}, "objective": "time", "cache": )";
  EXPECT_MENTIONS(read(header + R"({"1,2": {"x": 1, "time": 1.0}}})"), "bad.json: record \"1,2\": no value for the parameter 'y'");
  {
    const std::string message = read(header + R"({"1,2": {"x": 1, "y": 2, "time": "Banana"}}})");
    EXPECT_MENTIONS(message, "record \"1,2\": member 'time': \"Banana\"");
    EXPECT_MENTIONS(message, "InvalidConfig, CompilationFailedConfig, RuntimeFailedConfig");
  }
  EXPECT_MENTIONS(read(header + R"({"1,2": {"x": 1, "y": 2, "time": 1.0, "times": [1, "a"]}}})"),
                  "record \"1,2\": member 'times'[1]: expected a number, got a string");
  EXPECT_MENTIONS(read(header + R"({"1,2": {"x": [1], "y": 2}}})"), "record \"1,2\": parameter 'x': expected a number or a string");
  EXPECT_MENTIONS(read(header + R"({"1,2": 7}})"), "record \"1,2\": expected an object, got a number");
  EXPECT_MENTIONS(read(R"({"device_name": "d", "kernel_name": "k", "tune_params_keys": ["x", "x"],
                           "tune_params": {"x": [1]}, "cache": {}})"),
                  "tune_params_keys names 'x' twice");
  EXPECT_MENTIONS(read(R"({"device_name": "d", "kernel_name": "k", "tune_params_keys": ["x"],
                           "tune_params": {"x": [1], "z": [2]}, "cache": {}})"),
                  "tune_params has 'z', which is not in tune_params_keys (x)");
  EXPECT_MENTIONS(read(R"({"device_name": 5, "kernel_name": "k", "tune_params_keys": [], "tune_params": {}, "cache": {}})"),
                  "bad.json: device_name: expected a string, got a number");
  const std::string packed = gzip(kSmallCache);
  EXPECT_MENTIONS(read(packed.substr(0, packed.size() - 20)), "bad.json: the gzip data ends early");
  EXPECT_MENTIONS(error_of([] { (void)load_kernel_tuner_cache("/nonexistent/cache.json"); }), "/nonexistent/cache.json: cannot open");
}

// ---- the shared caches -------------------------------------------------------------------------

std::string shared_cache(const std::string& name) {
  return std::string(KTUNE_SHARED_DATA_DIR) + "/kernel_tuner_caches/" + name;
}

bool shared_data_present(const std::string& name) { return std::ifstream(shared_cache(name)).good(); }

#define SKIP_WITHOUT_SHARED(name) \
  if (!shared_data_present(name)) GTEST_SKIP() << "the shared cache " << (name) << " is not beside this checkout"

std::map<std::string, std::size_t> records_by_outcome(const KernelTunerCache& cache) {
  std::map<std::string, std::size_t> counts;
  for (const auto& record : cache.records) {
    if (record.time_ms) ++counts["measured"];
    if (record.failure) ++counts[std::string(to_string(*record.failure))];
  }
  return counts;
}

// The counts below are Python's: python3 -c "import gzip, json, collections;
// c = json.load(gzip.open(FILE))['cache']; print(len(c), collections.Counter(
// v['time'] if isinstance(v['time'], str) else 'measured' for v in c.values()))"
TEST(KernelTunerCacheShared, ConvolutionA100) {
  SKIP_WITHOUT_SHARED("convolution_milo_A100.json.gz");
  const KernelTunerCache cache = load_kernel_tuner_cache(shared_cache("convolution_milo_A100.json.gz"));
  EXPECT_EQ(cache.device_name, "NVIDIA A100-PCIE-40GB");
  EXPECT_EQ(cache.kernel_name, "convolution_kernel");
  EXPECT_EQ(cache.problem_size, (std::vector<Value>{std::int64_t{4096}, std::int64_t{4096}}));
  ASSERT_EQ(cache.tune_params_keys.size(), 10u);
  EXPECT_EQ(cache.tune_params_keys.front(), "block_size_x");
  EXPECT_EQ(cache.tune_params_keys.back(), "filter_width");
  EXPECT_EQ(cache.tune_params[0].second.size(), 16u);  // block_size_x: 16, 32, ..., 256
  EXPECT_EQ(cache.objective, "time");
  EXPECT_FALSE(cache.recovery);

  EXPECT_EQ(cache.records.size(), 4362u);
  const auto counts = records_by_outcome(cache);
  EXPECT_EQ(counts.at("measured"), 4201u);
  EXPECT_EQ(counts.at("RuntimeFailedConfig"), 155u);
  EXPECT_EQ(counts.at("CompilationFailedConfig"), 6u);
  EXPECT_EQ(counts.count("InvalidConfig"), 0u);

  const KernelTunerRecord* first = cache.find("16,1,1,1,0,0,0,1,15,15");
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first, &cache.records.front());
  EXPECT_EQ(first->time_ms, 3.8753279224038124);
  ASSERT_TRUE(first->times_ms);
  EXPECT_EQ(first->times_ms->size(), 32u);
  EXPECT_EQ(first->times_ms->front(), 3.976191997528076);
  EXPECT_EQ(first->number("GFLOP/s"), 1948.1569950129526);
  EXPECT_EQ(first->number("compile_time"), 918.5990339610726);
  EXPECT_EQ(first->member("timestamp")->get<std::string>(), "2023-12-22 09:54:05.502007+00:00");

  const KernelTunerRecord* last = cache.find("256,4,4,4,1,0,0,1,15,15");
  ASSERT_NE(last, nullptr);
  EXPECT_EQ(last->failure, KernelTunerFailure::runtime_failed);
  EXPECT_EQ(last->number("compile_time"), 8965.449352981523);
  EXPECT_EQ(cache.find("80,8,3,4,0,1,1,1,15,15")->failure, KernelTunerFailure::compilation_failed);

  // The optimum, as Python's min() over the measured records finds it.
  const KernelTunerRecord* best = nullptr;
  for (const auto& record : cache.records)
    if (record.time_ms && (best == nullptr || *record.time_ms < *best->time_ms)) best = &record;
  ASSERT_NE(best, nullptr);
  EXPECT_EQ(best->key, "32,4,1,3,1,0,1,1,15,15");
  EXPECT_EQ(best->time_ms, 0.5536000076681376);
  EXPECT_EQ(kernel_tuner_key(best->config), best->key);
}

TEST(KernelTunerCacheShared, CountsOfEveryFile) {
  const struct {
    const char* file;
    std::size_t records, measured;
    const char* device;
  } expected[] = {
      {"convolution_milo_A4000.json.gz", 4362, 4201, "NVIDIA RTX A4000"},
      {"dedispersion_milo_A100.json.gz", 11130, 11130, "NVIDIA A100-PCIE-40GB"},
      {"dedispersion_milo_A4000.json.gz", 11130, 11130, "NVIDIA RTX A4000"},
  };
  for (const auto& file : expected) {
    SKIP_WITHOUT_SHARED(file.file);
    const KernelTunerCache cache = load_kernel_tuner_cache(shared_cache(file.file));
    EXPECT_EQ(cache.device_name, file.device) << file.file;
    EXPECT_EQ(cache.records.size(), file.records) << file.file;
    EXPECT_EQ(records_by_outcome(cache)["measured"], file.measured) << file.file;
    for (const auto& record : cache.records) EXPECT_EQ(kernel_tuner_key(record.config), record.key) << file.file;
  }
}

TEST(KernelTunerCacheShared, GzipAndPlainReadTheSame) {
  SKIP_WITHOUT_SHARED("dedispersion_milo_A100.json.gz");
  const std::string path = shared_cache("dedispersion_milo_A100.json.gz");
  const std::string packed = read_file_bytes(path, kMaxDecompressedBytes);
  const std::string text = gunzip(packed, path);
  const KernelTunerCache from_gzip = read_kernel_tuner_cache(packed, path);
  const KernelTunerCache from_plain = read_kernel_tuner_cache(text, "plain.json");
  EXPECT_EQ(from_gzip, from_plain);
  EXPECT_EQ(from_plain.records.size(), 11130u);
  EXPECT_EQ(from_plain.find("1,32,1,1,1,0,0,0")->time_ms, 73.55395197868347);
  EXPECT_EQ(from_plain.problem_size, (std::vector<Value>{std::int64_t{25000}, std::int64_t{2048}, std::int64_t{1}}));
}

TEST(KernelTunerCacheShared, WriterReproducesKernelTunersBytes) {
  for (const char* name : {"convolution_milo_A100.json.gz", "dedispersion_milo_A4000.json.gz"}) {
    SKIP_WITHOUT_SHARED(name);
    const std::string text = read_text_maybe_gzip(shared_cache(name));
    const KernelTunerCache cache = read_kernel_tuner_cache(text, name);
    EXPECT_TRUE(kernel_tuner_cache_text(cache) == text) << name << ": the written text differs from Kernel Tuner's";
  }
}

TEST(KernelTunerCacheShared, SaveAndLoadRoundTrip) {
  SKIP_WITHOUT_SHARED("convolution_milo_A4000.json.gz");
  const KernelTunerCache cache = load_kernel_tuner_cache(shared_cache("convolution_milo_A4000.json.gz"));
  const std::filesystem::path directory = std::filesystem::temp_directory_path() / ("ktune_kt_cache_" + std::to_string(::getpid()));
  std::filesystem::create_directories(directory);
  for (const char* name : {"copy.json.gz", "copy.json"}) {
    const std::filesystem::path file = directory / name;
    save_kernel_tuner_cache(cache, file);
    const std::string bytes = read_file_bytes(file, kMaxDecompressedBytes);
    EXPECT_EQ(is_gzip(bytes), file.extension() == ".gz") << name;
    EXPECT_EQ(load_kernel_tuner_cache(file), cache) << name;
  }
  std::filesystem::remove_all(directory);
}

TEST(KernelTunerCacheShared, RecoversATruncatedRealCache) {
  SKIP_WITHOUT_SHARED("convolution_milo_A100.json.gz");
  const std::string text = read_text_maybe_gzip(shared_cache("convolution_milo_A100.json.gz"));
  const KernelTunerCache full = read_kernel_tuner_cache(text, "full.json");
  // Cut in the middle of the 1001st record's line, as a run killed while writing it leaves it.
  std::size_t position = text.find("\n\"cache\": {");
  for (int line = 0; line <= 1000; ++line) position = text.find('\n', position + 1);
  const std::size_t cut_at = position + 1 + 150;
  const KernelTunerCache cut = read_kernel_tuner_cache(text.substr(0, cut_at), "killed.json");
  ASSERT_TRUE(cut.recovery);
  EXPECT_EQ(cut.recovery->records_recovered, 1000u);
  EXPECT_EQ(cut.recovery->bytes_dropped, 150u);
  ASSERT_EQ(cut.records.size(), 1000u);
  EXPECT_TRUE(std::equal(cut.records.begin(), cut.records.end(), full.records.begin()));
  // Stopped between two records: the file ends with the 1000th record's ",".
  const KernelTunerCache between = read_kernel_tuner_cache(text.substr(0, position), "stopped.json");
  ASSERT_TRUE(between.recovery);
  EXPECT_EQ(between.recovery->records_recovered, 1000u);
  EXPECT_EQ(between.recovery->bytes_dropped, 0u);
}

}  // namespace
}  // namespace ktune
