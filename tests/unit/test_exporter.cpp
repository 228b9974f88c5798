// Tests of the header/JSON exporter: the text of the generated header (markers, named fields,
// designated initializers, order, types), its JSON twin, the atomic writes, and a consumer
// program compiled against a freshly generated header that exercises the fallback chain
// (device -> architecture -> vendor -> default) and the nearest-shape rule.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "db/export/header_exporter.hpp"
#include "tuner/core/errors.hpp"

namespace ktune {
namespace {

namespace fs = std::filesystem;

constexpr const char* kGeneratedAt = "2026-01-02T03:04:05Z";

struct Dev {
  const char* backend;
  const char* name;
  const char* architecture;
  const char* vendor;
};

constexpr Dev kEpyc{"cpu", "AMD EPYC 7B13", "x86_64-avx2", "amd"};
constexpr Dev kRyzen{"cpu", "AMD Ryzen 9 5950X", "x86_64-avx2", "amd"};  // same architecture
constexpr Dev kH200{"cuda", "NVIDIA H200", "sm_90", "nvidia"};

Config rmsnorm_config(std::int64_t threads, std::int64_t rows_per_task, std::int64_t vector_width,
                      std::int64_t unroll) {
  return Config{{{"threads", threads},
                 {"rows_per_task", rows_per_task},
                 {"vector_width", vector_width},
                 {"unroll", unroll}}};
}

BestMeasurement make_entry(std::int64_t id, const Dev& dev, std::int64_t rows, std::int64_t cols,
                           Precision precision, Config config, double median_ns = 1000) {
  BestMeasurement entry;
  entry.measurement_id = id;
  entry.device.backend = dev.backend;
  entry.device.name = dev.name;
  entry.device.architecture = dev.architecture;
  entry.device.vendor = dev.vendor;
  entry.device.fingerprint = std::string(dev.backend) + ":" + dev.name + ":fp";
  entry.family = "rmsnorm";
  entry.backend = dev.backend;
  entry.source_hash = "src" + std::to_string(id);
  entry.problem.family = "rmsnorm";
  entry.problem.dims = {{"rows", rows}, {"cols", cols}};
  entry.problem.precision = precision;
  entry.config = std::move(config);
  entry.stats.count = 10;
  entry.stats.median_ns = median_ns;
  entry.stats.min_ns = median_ns * 0.9;
  entry.stats.max_ns = median_ns * 1.2;
  entry.stats.mean_ns = median_ns * 1.01;
  entry.stats.rel_stddev = 0.004;
  entry.error = 2.5e-7;
  entry.measured_at = "2026-01-01T00:00:" + std::to_string(10 + id % 50) + "Z";
  entry.ktune_version = "0.1.0";
  entry.git_commit = "abc123def456";
  return entry;
}

// Two CPU devices sharing an architecture (several shapes, two precisions).
ExportFamily rmsnorm_family() {
  ExportFamily family;
  family.family = "rmsnorm";
  family.backend = "cpu";
  family.dim_names = {"rows", "cols"};
  family.param_names = {"threads", "rows_per_task", "vector_width", "unroll"};
  family.default_config = rmsnorm_config(1, 1, 1, 1);
  family.database = "/data/ktune.db";
  family.entries = {
      make_entry(22, kRyzen, 1024, 1024, Precision::fp32, rmsnorm_config(16, 8, 4, 2), 900.5),
      make_entry(12, kEpyc, 4096, 4096, Precision::fp32, rmsnorm_config(8, 16, 8, 4), 51234.25),
      make_entry(11, kEpyc, 256, 1024, Precision::fp32, rmsnorm_config(2, 4, 8, 2), 1234.5),
      make_entry(13, kEpyc, 256, 1024, Precision::fp16, rmsnorm_config(1, 2, 16, 1), 800),
      make_entry(21, kRyzen, 256, 1024, Precision::fp32, rmsnorm_config(4, 1, 4, 8), 1100),
  };
  return family;
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

// A fresh directory under the system temp dir, removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = fs::temp_directory_path() /
            ("ktune-test-exporter-" + std::to_string(::getpid()) + "-" + test->name());
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

std::string shell_quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// Runs the system C++ compiler; returns its output (empty on success) or fails the test.
::testing::AssertionResult compile(const std::string& arguments, const fs::path& log) {
  const std::string command = "c++ -std=c++20 -Wall -Wextra -Werror " + arguments + " > " +
                              shell_quote(log.string()) + " 2>&1";
  const int status = std::system(command.c_str());
  if (status == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << command << "\nfailed:\n" << read_text(log);
}

fs::path consumer_source() { return fs::path(KTUNE_SOURCE_DIR) / "tests" / "consumer" / "consumer.cpp"; }

// Runs the consumer and parses its key=value line.
std::map<std::string, std::string> run_consumer(const fs::path& binary, const std::vector<std::string>& args) {
  std::string command = shell_quote(binary.string());
  for (const auto& arg : args) command += " " + shell_quote(arg);
  std::map<std::string, std::string> result;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) {
    ADD_FAILURE() << "cannot run " << command;
    return result;
  }
  std::string output;
  char buffer[512];
  while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) output += buffer;
  const int status = ::pclose(pipe);
  EXPECT_EQ(status, 0) << command;
  EXPECT_EQ(std::count(output.begin(), output.end(), '\n'), 1) << "one line expected: " << output;
  std::istringstream tokens(output);
  std::string token;
  while (tokens >> token) {
    const auto equals = token.find('=');
    if (equals == std::string::npos) {
      ADD_FAILURE() << "not key=value: " << token << " in " << output;
      continue;
    }
    result[token.substr(0, equals)] = token.substr(equals + 1);
  }
  result["_line"] = output;
  return result;
}

std::vector<std::string> query(const Dev& dev, std::int64_t rows, std::int64_t cols,
                               const std::string& precision = "fp32") {
  return {"--backend", dev.backend, "--device", dev.name, "--architecture", dev.architecture,
          "--vendor", dev.vendor, "--rows", std::to_string(rows), "--cols", std::to_string(cols),
          "--precision", precision};
}

// Checks the config and the answering level/entry of one consumer answer.
void expect_answer(const std::map<std::string, std::string>& got, const std::string& level,
                   const std::string& measurement_id, const std::string& config) {
  const std::string line = got.count("_line") ? got.at("_line") : "";
  EXPECT_EQ(got.count("level") ? got.at("level") : "", level) << line;
  EXPECT_EQ(got.count("measurement_id") ? got.at("measurement_id") : "none", measurement_id) << line;
  const std::string actual = (got.count("threads") ? got.at("threads") : "?") + "/" +
                             (got.count("rows_per_task") ? got.at("rows_per_task") : "?") + "/" +
                             (got.count("vector_width") ? got.at("vector_width") : "?") + "/" +
                             (got.count("unroll") ? got.at("unroll") : "?");
  EXPECT_EQ(actual, config) << line;
}

// ---------------------------------------------------------------------------------------------
// Header text

TEST(RenderHeader, SaysGeneratedDoNotEditWithProvenanceAndUsage) {
  const std::string header = render_header(rmsnorm_family(), kGeneratedAt);
  EXPECT_EQ(header.rfind("// rmsnorm.hpp:", 0), 0u) << header.substr(0, 200);
  EXPECT_NE(header.find("GENERATED by `ktune export`"), std::string::npos);
  EXPECT_NE(header.find("DO NOT EDIT"), std::string::npos);
  EXPECT_NE(header.find("//   family:     rmsnorm\n"), std::string::npos);
  EXPECT_NE(header.find("//   database:   \"/data/ktune.db\"\n"), std::string::npos);
  EXPECT_NE(header.find("//   generated:  2026-01-02T03:04:05Z\n"), std::string::npos);
  EXPECT_NE(header.find("//   entries:    5 "), std::string::npos);
  EXPECT_NE(header.find("namespace tuned = ktune::tuned::cpu::rmsnorm;"), std::string::npos);
  EXPECT_NE(header.find("tuned::lookup(device, tuned::Shape{.rows = "), std::string::npos);
  EXPECT_NE(header.find("|log2(query / tuned)|"), std::string::npos);  // the metric is documented
  EXPECT_NE(header.find("namespace ktune::tuned::cpu::rmsnorm {"), std::string::npos);
  EXPECT_NE(header.find("#pragma once"), std::string::npos);
  // Standard headers only.
  std::smatch match;
  std::string rest = header;
  while (std::regex_search(rest, match, std::regex("#include <([^>]+)>\n"))) {
    EXPECT_TRUE(match[1] == "array" || match[1] == "cstddef" || match[1] == "cstdint" ||
                match[1] == "string_view")
        << match[1];
    rest = match.suffix();
  }
  EXPECT_EQ(header.find("#include \"", header.find("#pragma once")), std::string::npos);
  // Provenance of each entry.
  EXPECT_NE(header.find(".measured_at = \"2026-01-01T00:00:21Z\", .ktune_version = \"0.1.0\", "
                        ".git_commit = \"abc123def456\", .measurement_id = 11}"),
            std::string::npos);
}

TEST(RenderHeader, NamedStructsAndDesignatedInitializersOnly) {
  const std::string header = render_header(rmsnorm_family(), kGeneratedAt);
  EXPECT_NE(header.find("struct Config {\n  std::int64_t threads;\n  std::int64_t rows_per_task;\n"
                        "  std::int64_t vector_width;\n  std::int64_t unroll;\n};"),
            std::string::npos);
  EXPECT_NE(header.find("struct Shape {\n  std::int64_t rows;\n  std::int64_t cols;\n};"), std::string::npos);
  // Golden lines: the default and one entry.
  EXPECT_NE(header.find("\ninline constexpr Config default_config{.threads = 1, .rows_per_task = 1, "
                        ".vector_width = 1, .unroll = 1};\n"),
            std::string::npos);
  EXPECT_NE(header.find("    // cpu | AMD EPYC 7B13 | rows=256 cols=1024 fp32\n"
                        "    {.backend = \"cpu\", .device = \"AMD EPYC 7B13\", .architecture = \"x86_64-avx2\", "
                        ".vendor = \"amd\", .precision = \"fp32\",\n"
                        "     .shape = {.rows = 256, .cols = 1024},\n"
                        "     .config = {.threads = 2, .rows_per_task = 4, .vector_width = 8, .unroll = 2},\n"
                        "     .shared_bytes = 0, .threads = 0,\n"
                        "     .median_ns = 1234.5, "),
            std::string::npos)
      << header;
  EXPECT_NE(header.find("inline constexpr std::array<TunedEntry, 5> entries{{\n"), std::string::npos);
  // No positional brace lists: every brace list that starts with a value is an error.
  EXPECT_FALSE(std::regex_search(header, std::regex(R"(\{\s*-?[0-9"])"))) << header;
  EXPECT_FALSE(std::regex_search(header, std::regex(R"((default_config|\.config = )\{[^.])")));
  // Every config in the header is written with names.
  const std::regex config_line(R"(\.config = \{([^}]*)\})");
  int configs = 0;
  for (auto it = std::sregex_iterator(header.begin(), header.end(), config_line); it != std::sregex_iterator();
       ++it, ++configs)
    EXPECT_TRUE(std::regex_match((*it)[1].str(), std::regex(R"(\.threads = \d+, \.rows_per_task = \d+, )"
                                                            R"(\.vector_width = \d+, \.unroll = \d+)")))
        << (*it)[0];
  EXPECT_EQ(configs, 5);
}

TEST(RenderHeader, SortsEntriesDeterministically) {
  ExportFamily family = rmsnorm_family();
  const std::string header = render_header(family, kGeneratedAt);
  std::reverse(family.entries.begin(), family.entries.end());
  EXPECT_EQ(render_header(family, kGeneratedAt), header);
  // backend, vendor, architecture, device, precision, shape.
  std::vector<std::size_t> positions;
  for (const char* id : {"= 11}", "= 12}", "= 13}", "= 21}", "= 22}"})
    positions.push_back(header.find(std::string(".measurement_id ") + id));
  for (std::size_t i = 0; i < positions.size(); ++i) {
    ASSERT_NE(positions[i], std::string::npos) << i;
    if (i > 0) {
      EXPECT_LT(positions[i - 1], positions[i]) << i;
    }
  }
  // Only the generation date differs between exports of the same data.
  const std::string other = render_header(family, "2030-12-31T23:59:59Z");
  EXPECT_NE(other, header);
  std::string replaced = other;
  replaced.replace(replaced.find("2030-12-31T23:59:59Z"), 20, kGeneratedAt);
  EXPECT_EQ(replaced, header);
}

TEST(RenderHeader, KeepsOnlyTheNewestOfEntriesTheLookupCannotTellApart) {
  ExportFamily family = rmsnorm_family();
  // Same device name (other spelling), precision and shape as entry 11, measured later
  // (for example with a newer kernel source): it replaces 11.
  BestMeasurement newer = make_entry(41, kEpyc, 256, 1024, Precision::fp32, rmsnorm_config(2, 2, 2, 2));
  newer.device.name = "amd  epyc 7b13";
  newer.measured_at = "2026-02-01T00:00:00Z";
  family.entries.push_back(newer);
  const std::string header = render_header(family, kGeneratedAt);
  EXPECT_EQ(header.find(".measurement_id = 11}"), std::string::npos);
  EXPECT_NE(header.find(".measurement_id = 41}"), std::string::npos);
  EXPECT_NE(header.find("//   entries:    5 "), std::string::npos);
  EXPECT_NE(header.find("1 older duplicate(s) left out"), std::string::npos);
}

// One header is one backend's table: an entry of another backend is refused, not mixed in.
TEST(RenderHeader, RefusesAnEntryOfAnotherBackend) {
  ExportFamily family = rmsnorm_family();
  family.entries.push_back(make_entry(31, kH200, 1024, 1024, Precision::fp32, rmsnorm_config(256, 1, 4, 1), 3.5));
  try {
    render_header(family, kGeneratedAt);
    ADD_FAILURE() << "a CUDA entry went into the CPU header";
  } catch (const InputError& error) {
    EXPECT_NE(std::string(error.what()).find("backend 'cuda'"), std::string::npos) << error.what();
  }
}

// Code that handles every family alike reads a config's parameters and builds a shape by name.
TEST(RenderHeader, GenericAccessVisitsParametersAndBuildsShapesByName) {
  const std::string header = render_header(rmsnorm_family(), kGeneratedAt);
  TempDir dir;
  write_text(dir.path() / "rmsnorm.hpp", header);
  write_text(dir.path() / "check.cpp", R"(#include "rmsnorm.hpp"
namespace t = ktune::tuned::cpu::rmsnorm;
constexpr long long weighted_sum(const t::Config& c) {
  long long sum = 0, weight = 1;
  t::for_each_parameter(c, [&](std::string_view name, auto value) {
    sum += weight * value * (name.size() > 0);
    weight *= 100;
  });
  return sum;
}
static_assert(weighted_sum({.threads = 1, .rows_per_task = 2, .vector_width = 3, .unroll = 4}) == 4030201);
constexpr t::Shape shape = t::make_shape([](std::string_view dim) { return dim == "rows" ? 7 : 9; });
static_assert(shape.rows == 7 && shape.cols == 9);
constexpr long long dims_text(const t::Shape& s) {
  long long sum = 0;
  t::for_each_dim(s, [&](std::string_view name, long long value) { sum = sum * 100 + value + (name == "cols"); });
  return sum;
}
static_assert(dims_text(shape) == 710);
int main() { return 0; }
)");
  EXPECT_TRUE(compile("-fsyntax-only -I" + shell_quote(dir.path().string()) + " " +
                          shell_quote((dir.path() / "check.cpp").string()),
                      dir.path() / "compile.log"));
}

TEST(RenderHeader, EscapesStringsThatAreNotPlainText) {
  ExportFamily family = rmsnorm_family();
  family.entries.resize(1);
  family.entries[0].device.name = "Quote\" Back\\slash\nnewline?" "?=";  // no trigraph in this source
  family.database = "C:\\dbs\\";
  const std::string header = render_header(family, kGeneratedAt);
  EXPECT_NE(header.find(R"(.device = "Quote\" Back\\slash\012newline?\?=")"), std::string::npos) << header;
  EXPECT_NE(header.find("//   database:   \"C:\\\\dbs\\\\\"\n"), std::string::npos) << header;
}

TEST(RenderHeader, RefusesInputItCannotRenderFaithfully) {
  {
    ExportFamily family = rmsnorm_family();
    family.entries[0].config.values.pop_back();  // no unroll
    EXPECT_THROW(render_header(family, kGeneratedAt), InputError);
  }
  {
    ExportFamily family = rmsnorm_family();
    family.entries[0].config.values.emplace_back("extra", std::int64_t{1});
    EXPECT_THROW(render_header(family, kGeneratedAt), InputError);
  }
  {
    ExportFamily family = rmsnorm_family();
    family.entries[0].problem.dims.pop_back();  // no cols
    EXPECT_THROW(render_header(family, kGeneratedAt), InputError);
  }
  {
    ExportFamily family = rmsnorm_family();
    family.entries[0].config.values[0].second = std::string("many");  // string among integers
    try {
      render_header(family, kGeneratedAt);
      ADD_FAILURE() << "mixed string and integer values were accepted";
    } catch (const InputError& error) {
      EXPECT_NE(std::string(error.what()).find("threads"), std::string::npos) << error.what();
    }
  }
  for (const char* bad : {"default", "2d", "my-param", "__x", "std"}) {
    ExportFamily family = rmsnorm_family();
    family.param_names[0] = bad;
    EXPECT_THROW(render_header(family, kGeneratedAt), InputError) << bad;
  }
  {
    ExportFamily family = rmsnorm_family();
    family.family = "rms-norm";
    EXPECT_THROW(render_header(family, kGeneratedAt), InputError);
  }
}

// A family with a string-valued and a real-valued parameter: the field types follow the values,
// and the header works at compile time (checked with static_assert by the compiler).
TEST(RenderHeader, StringAndRealParametersGetTheirOwnTypes) {
  ExportFamily family;
  family.family = "gemm";
  family.backend = "cuda";
  family.dim_names = {"m", "n", "k"};
  family.param_names = {"block", "layout", "alpha"};
  family.default_config = Config{{{"block", std::int64_t{64}}, {"layout", std::string("row_major")},
                                  {"alpha", std::int64_t{1}}}};  // an integer among reals
  family.database = "ktune.db";
  auto entry = [](std::int64_t id, std::int64_t m, std::int64_t block, const char* layout, double alpha) {
    BestMeasurement e = make_entry(id, kH200, 0, 0, Precision::bf16, Config{});
    e.family = "gemm";
    e.problem.family = "gemm";
    e.problem.dims = {{"m", m}, {"n", 4096}, {"k", 4096}};
    e.config = Config{{{"block", block}, {"layout", std::string(layout)}, {"alpha", alpha}}};
    return e;
  };
  family.entries = {entry(1, 1024, 128, "col_major", 0.5), entry(2, 8192, 256, "row_major", 0.25)};

  const std::string header = render_header(family, kGeneratedAt);
  EXPECT_NE(header.find("struct Config {\n  std::int64_t block;\n  std::string_view layout;\n  double alpha;\n};"),
            std::string::npos)
      << header;
  EXPECT_NE(header.find("default_config{.block = 64, .layout = \"row_major\", .alpha = 1.0};"), std::string::npos);
  EXPECT_NE(header.find(".config = {.block = 128, .layout = \"col_major\", .alpha = 0.5},"), std::string::npos);
  EXPECT_NE(header.find(".shape = {.m = 1024, .n = 4096, .k = 4096},"), std::string::npos);

  TempDir dir;
  write_text(dir.path() / "gemm.hpp", header);
  write_text(dir.path() / "check.cpp", R"(#include "gemm.hpp"
#include <type_traits>
namespace t = ktune::tuned::cuda::gemm;
static_assert(std::is_same_v<decltype(t::Config::layout), std::string_view>);
static_assert(std::is_same_v<decltype(t::Config::alpha), double>);
static_assert(t::entries.size() == 2);
constexpr t::DeviceQuery h200{.backend = "CUDA", .device = " nvidia  h200", .architecture = "sm_90", .vendor = "nvidia"};
// Nearest m: 2000 is nearer 1024 (log2 ratio 0.97) than 8192 (2.03).
static_assert(t::lookup(h200, {.m = 2000, .n = 4096, .k = 4096}, "bf16").layout == "col_major");
static_assert(t::lookup(h200, {.m = 6000, .n = 4096, .k = 4096}, "bf16").alpha == 0.25);
static_assert(t::lookup_entry(h200, {.m = 6000, .n = 4096, .k = 4096}, "bf16").entry->measurement_id == 2);
static_assert(t::lookup_entry(h200, {.m = 1, .n = 1, .k = 1}, "bf16").level == t::MatchLevel::device);
constexpr t::DeviceQuery other{.backend = "cuda", .device = "GH200", .architecture = "sm_100", .vendor = "amd"};
static_assert(t::lookup_entry(other, {.m = 1024, .n = 4096, .k = 4096}).level == t::MatchLevel::default_config);
static_assert(t::lookup(other, {.m = 1024, .n = 4096, .k = 4096}).layout == "row_major");
static_assert(t::lookup(other, {.m = 1024, .n = 4096, .k = 4096}).block == 64);
int main() { return 0; }
)");
  EXPECT_TRUE(compile("-fsyntax-only -I" + shell_quote(dir.path().string()) + " " +
                          shell_quote((dir.path() / "check.cpp").string()),
                      dir.path() / "compile.log"));
}

// Option dims (a layout, an epilogue) are never bridged by "nearest shape": an entry tuned for
// b_layout 0 must not answer a b_layout 1 query, whose valid configs differ; the default does.
TEST(RenderHeader, OptionDimsMustMatchExactly) {
  ExportFamily family;
  family.family = "gemm";
  family.backend = "cuda";
  family.dim_names = {"m", "n", "k", "b_layout"};
  family.option_dims = {"b_layout"};
  family.param_names = {"path"};
  family.default_config = Config{{{"path", std::string("simt")}}};
  family.database = "ktune.db";
  auto entry = [](std::int64_t id, std::int64_t m, std::int64_t layout, const char* path) {
    BestMeasurement e = make_entry(id, kH200, 0, 0, Precision::bf16, Config{});
    e.family = "gemm";
    e.problem.family = "gemm";
    e.problem.dims = {{"m", m}, {"n", 4096}, {"k", 4096}, {"b_layout", layout}};
    e.config = Config{{{"path", std::string(path)}}};
    return e;
  };
  family.entries = {entry(1, 4096, 0, "wgmma"), entry(2, 64, 1, "mma")};
  const std::string header = render_header(family, kGeneratedAt);
  EXPECT_NE(header.find("Option dims (b_layout) must match exactly"), std::string::npos);

  TempDir dir;
  write_text(dir.path() / "gemm.hpp", header);
  write_text(dir.path() / "check.cpp", R"(#include "gemm.hpp"
namespace t = ktune::tuned::cuda::gemm;
constexpr t::DeviceQuery h200{.backend = "cuda", .device = "NVIDIA H200", .architecture = "sm_90", .vendor = "nvidia"};
// m = 4096 is the exact shape of entry 1 but with b_layout 1 only entry 2 (m = 64) may answer.
static_assert(t::lookup(h200, {.m = 4096, .n = 4096, .k = 4096, .b_layout = 1}, "bf16").path == "mma");
static_assert(t::lookup(h200, {.m = 64, .n = 4096, .k = 4096, .b_layout = 0}, "bf16").path == "wgmma");
static_assert(t::lookup_entry(h200, {.m = 64, .n = 4096, .k = 4096, .b_layout = 2}, "bf16").level ==
              t::MatchLevel::default_config);
int main() { return 0; }
)");
  EXPECT_TRUE(compile("-fsyntax-only -I" + shell_quote(dir.path().string()) + " " +
                          shell_quote((dir.path() / "check.cpp").string()),
                      dir.path() / "compile.log"));
}

TEST(RenderHeader, ResourcesValidateAgainstDeviceLimitsAndArchitectureDefaultsAreUntuned) {
  ExportFamily family;
  family.family = "flash_attention";
  family.backend = "cuda";
  family.dim_names = {"seq", "head_dim"};
  family.option_dims = {"head_dim"};
  family.param_names = {"block_q"};
  family.default_config = Config{{{"block_q", std::int64_t{64}}}};
  family.database = "ktune.db";
  auto entry = [](std::int64_t id, std::int64_t seq, std::int64_t block_q) {
    BestMeasurement e = make_entry(id, kH200, 0, 0, Precision::bf16, Config{});
    e.family = "flash_attention";
    e.problem.family = "flash_attention";
    e.problem.dims = {{"seq", seq}, {"head_dim", 128}};
    e.config = Config{{{"block_q", block_q}}};
    return e;
  };
  family.entries = {entry(1, 4096, 128), entry(2, 1024, 64)};
  family.resources = {{1, {200000, 384}}, {2, {90000, 256}}};
  family.architecture_defaults = {{"ampere", "fp16", {{"block_q", 128}, {"block_kv", 128}}},
                                  {"fallback", "fp32", {{"block_q", 32}, {"block_kv", 32}}}};
  const std::string header = render_header(family, kGeneratedAt);
  EXPECT_NE(header.find(".shared_bytes = 200000, .threads = 384"), std::string::npos) << header;

  TempDir dir;
  write_text(dir.path() / "flash_attention.hpp", header);
  write_text(dir.path() / "check.cpp", R"(#include "flash_attention.hpp"
namespace t = ktune::tuned::cuda::flash_attention;
constexpr t::DeviceQuery h200{.backend = "cuda", .device = "NVIDIA H200", .architecture = "sm_90", .vendor = "nvidia"};
constexpr const t::TunedEntry* big = t::lookup_entry(h200, {.seq = 4096, .head_dim = 128}, "bf16").entry;
static_assert(t::required_shared_memory(*big) == 200000);
// 227 KiB per block (an H100/H200) runs it; 100 KiB (an RTX 4090's opt-in) does not.
static_assert(t::validate_config(*big, {.max_shared_memory_per_block = 232448, .max_threads_per_block = 1024}));
static_assert(!t::validate_config(*big, {.max_shared_memory_per_block = 101376, .max_threads_per_block = 1024}));
static_assert(!t::validate_config(*big, {.max_shared_memory_per_block = 232448, .max_threads_per_block = 256}));
// Untuned starting points: by target, an unknown target gets the fallback, never marked tuned.
static_assert(t::architecture_default("ampere")->block_kv == 128);
static_assert(t::architecture_default("rdna4")->target == "fallback");
static_assert(t::architecture_default("rdna4")->precision == "fp32");
static_assert(!t::architecture_default("ampere")->tuned);
int main() { return 0; }
)");
  EXPECT_TRUE(compile("-fsyntax-only -I" + shell_quote(dir.path().string()) + " " +
                          shell_quote((dir.path() / "check.cpp").string()),
                      dir.path() / "compile.log"));
  const nlohmann::json json = render_json(family, kGeneratedAt);
  EXPECT_EQ(json.at("architecture_defaults").size(), 2u);
  EXPECT_EQ(json.at("architecture_defaults")[0].at("tuned"), false);
  EXPECT_EQ(json.at("entries")[0].at("shared_bytes").get<std::int64_t>() +
                json.at("entries")[1].at("shared_bytes").get<std::int64_t>(), 290000);

  // Defaults that name different values cannot make one struct.
  family.architecture_defaults[1].values[1].first = "block_k";
  EXPECT_THROW(render_header(family, kGeneratedAt), InputError);
}

// ---------------------------------------------------------------------------------------------
// JSON and files

TEST(RenderJson, HoldsEverythingTheHeaderHoldsPlusStatistics) {
  const nlohmann::json json = render_json(rmsnorm_family(), kGeneratedAt);
  EXPECT_EQ(json.at("family"), "rmsnorm");
  EXPECT_EQ(json.at("generated_at"), kGeneratedAt);
  EXPECT_EQ(json.at("database"), "/data/ktune.db");
  EXPECT_EQ(json.at("dims"), nlohmann::json({"rows", "cols"}));
  ASSERT_EQ(json.at("params").size(), 4u);
  EXPECT_EQ(json.at("params")[0], nlohmann::json({{"name", "threads"}, {"type", "int"}}));
  EXPECT_EQ(json.at("default").at("unroll"), 1);
  EXPECT_EQ(json.at("backend"), "cpu");
  ASSERT_EQ(json.at("entries").size(), 5u);
  const nlohmann::json& first = json.at("entries")[0];  // same order as the header
  EXPECT_EQ(first.at("measurement_id"), 11);
  EXPECT_EQ(first.at("backend"), "cpu");
  EXPECT_EQ(first.at("device").at("name"), "AMD EPYC 7B13");
  EXPECT_EQ(first.at("device").at("architecture"), "x86_64-avx2");
  EXPECT_EQ(first.at("device").at("vendor"), "amd");
  EXPECT_EQ(first.at("device").at("fingerprint"), "cpu:AMD EPYC 7B13:fp");
  EXPECT_EQ(first.at("precision"), "fp32");
  EXPECT_EQ(first.at("shape"), nlohmann::json({{"rows", 256}, {"cols", 1024}}));
  EXPECT_EQ(first.at("config").at("vector_width"), 8);
  EXPECT_DOUBLE_EQ(first.at("stats").at("median_ns").get<double>(), 1234.5);
  EXPECT_DOUBLE_EQ(first.at("stats").at("min_ns").get<double>(), 1234.5 * 0.9);
  EXPECT_DOUBLE_EQ(first.at("stats").at("mean_ns").get<double>(), 1234.5 * 1.01);
  EXPECT_DOUBLE_EQ(first.at("stats").at("rel_stddev").get<double>(), 0.004);
  EXPECT_DOUBLE_EQ(first.at("error").get<double>(), 2.5e-7);
  EXPECT_EQ(first.at("source_hash"), "src11");
  EXPECT_EQ(first.at("measured_at"), "2026-01-01T00:00:21Z");
  EXPECT_EQ(first.at("ktune_version"), "0.1.0");
  EXPECT_EQ(first.at("git_commit"), "abc123def456");

  ExportFamily unverified = rmsnorm_family();
  unverified.entries.resize(1);
  unverified.entries[0].error = -1;  // not verified
  EXPECT_TRUE(render_json(unverified, kGeneratedAt).at("entries")[0].at("error").is_null());
}

TEST(WriteExports, WritesHeaderAndJsonIntoANewDirectory) {
  TempDir dir;
  const fs::path out = dir.path() / "nested" / "tuned";
  const fs::path header = write_exports(rmsnorm_family(), out);
  EXPECT_EQ(header, out / "rmsnorm.hpp");
  ASSERT_TRUE(fs::exists(out / "rmsnorm.hpp"));
  ASSERT_TRUE(fs::exists(out / "rmsnorm.json"));
  std::vector<std::string> names;
  for (const auto& file : fs::directory_iterator(out)) names.push_back(file.path().filename().string());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"rmsnorm.hpp", "rmsnorm.json"}));  // no temp files left

  const nlohmann::json json = nlohmann::json::parse(read_text(out / "rmsnorm.json"));
  const std::string text = read_text(header);
  const std::string date = json.at("generated_at");
  EXPECT_TRUE(std::regex_match(date, std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)"))) << date;
  EXPECT_EQ(text, render_header(rmsnorm_family(), date));  // the same date in both files

  // A second export replaces both files.
  ExportFamily fewer = rmsnorm_family();
  fewer.entries.resize(2);
  write_exports(fewer, out);
  EXPECT_EQ(nlohmann::json::parse(read_text(out / "rmsnorm.json")).at("entries").size(), 2u);
  EXPECT_NE(read_text(header).find("std::array<TunedEntry, 2>"), std::string::npos);

  // Bad input writes nothing.
  ExportFamily bad = rmsnorm_family();
  bad.family = "other";
  bad.param_names[0] = "class";
  EXPECT_THROW(write_exports(bad, out), InputError);
  EXPECT_FALSE(fs::exists(out / "other.hpp"));
  EXPECT_FALSE(fs::exists(out / "other.json"));
}

// ---------------------------------------------------------------------------------------------
// A downstream program built against freshly generated headers

TEST(Consumer, FallbackChainAndNearestShape) {
  TempDir dir;
  write_exports(rmsnorm_family(), dir.path() / "tuned" / "cpu");
  const fs::path binary = dir.path() / "consumer";
  ASSERT_TRUE(compile("-I" + shell_quote((dir.path() / "tuned").string()) + " " +
                          shell_quote(consumer_source().string()) + " -o " + shell_quote(binary.string()),
                      dir.path() / "compile.log"));

  // Exact device and shape.
  expect_answer(run_consumer(binary, query(kEpyc, 256, 1024)), "device", "11", "2/4/8/2");
  const auto exact = run_consumer(binary, query(kEpyc, 256, 1024));
  EXPECT_EQ(exact.count("tuned_rows") ? exact.at("tuned_rows") : "", "256");
  EXPECT_EQ(exact.count("tuned_precision") ? exact.at("tuned_precision") : "", "fp32");
  // Same device, untuned shapes: the nearest tuned shape (sum of |log2| ratios).
  expect_answer(run_consumer(binary, query(kEpyc, 512, 1024)), "device", "11", "2/4/8/2");     // 1 vs 5
  expect_answer(run_consumer(binary, query(kEpyc, 3000, 3000)), "device", "12", "8/16/8/4");   // 5.1 vs 0.9
  expect_answer(run_consumer(binary, query(kEpyc, 100000, 8)), "device", "12", "8/16/8/4");    // huge rows
  // The requested precision wins over the shape; a precision nobody tuned falls back on shape.
  expect_answer(run_consumer(binary, query(kEpyc, 4096, 4096, "fp16")), "device", "13", "1/2/16/1");
  expect_answer(run_consumer(binary, query(kEpyc, 4096, 4096, "bf16")), "device", "12", "8/16/8/4");
  // Device names are compared normalised.
  Dev spelled = kEpyc;
  spelled.name = "  amd   EPYC\t7b13 ";
  expect_answer(run_consumer(binary, query(spelled, 256, 1024)), "device", "11", "2/4/8/2");
  // Unknown device of a tuned architecture: the architecture's entries (both devices).
  const Dev other_zen{"cpu", "AMD EPYC 9654", "x86_64-avx2", "amd"};
  expect_answer(run_consumer(binary, query(other_zen, 1024, 1024)), "architecture", "22", "16/8/4/2");
  expect_answer(run_consumer(binary, query(other_zen, 4000, 4000)), "architecture", "12", "8/16/8/4");
  // Unknown device and architecture of a tuned vendor.
  const Dev other_amd{"cpu", "AMD EPYC 9965", "x86_64-avx512", "AMD"};
  expect_answer(run_consumer(binary, query(other_amd, 4096, 4096)), "vendor", "12", "8/16/8/4");
  // Nothing known: the default.
  const Dev intel{"cpu", "Intel Xeon Platinum 8480+", "x86_64-avx512", "intel"};
  const auto unknown = run_consumer(binary, query(intel, 256, 1024));
  expect_answer(unknown, "default_config", "none", "1/1/1/1");
  EXPECT_EQ(unknown.count("tuned_rows"), 0u);
  // The backend must match at every level: a CPU name asked for on CUDA is not that CPU.
  Dev wrong_backend = kEpyc;
  wrong_backend.backend = "cuda";
  expect_answer(run_consumer(binary, query(wrong_backend, 256, 1024)), "default_config", "none", "1/1/1/1");
  // One header holds one backend's table: a CUDA device gets this CPU table's default.
  expect_answer(run_consumer(binary, query(kH200, 256, 1024)), "default_config", "none", "1/1/1/1");
  // Empty query fields match nothing (entries never have an empty name, but the rule holds).
  expect_answer(run_consumer(binary, {"--backend", "cpu", "--rows", "256", "--cols", "1024"}),
                "default_config", "none", "1/1/1/1");
}

// Two backends' tables of one family in one program: included in one file and used from two
// translation units, each lookup answers from its own backend's table.
TEST(Consumer, TwoBackendsTablesOfOneFamilyLinkIntoOneProgram) {
  TempDir dir;
  write_exports(rmsnorm_family(), dir.path() / "tuned" / "cpu");
  ExportFamily vulkan;
  vulkan.family = "rmsnorm";
  vulkan.backend = "vulkan";
  vulkan.dim_names = {"rows", "cols"};
  vulkan.param_names = {"block_threads", "vector"};
  vulkan.default_config = Config{{{"block_threads", std::int64_t{64}}, {"vector", std::int64_t{1}}}};
  vulkan.database = "ktune.db";
  BestMeasurement entry = make_entry(51, {"vulkan", "llvmpipe", "lavapipe", "mesa"}, 256, 1024, Precision::fp32,
                                     Config{{{"block_threads", std::int64_t{256}}, {"vector", std::int64_t{4}}}});
  vulkan.entries = {entry};
  write_exports(vulkan, dir.path() / "tuned" / "vulkan");
  write_text(dir.path() / "cpu_side.cpp", R"(#include "cpu/rmsnorm.hpp"
long long cpu_threads() {
  namespace t = ktune::tuned::cpu::rmsnorm;
  return t::lookup({.backend = "cpu", .device = "AMD EPYC 7B13", .architecture = "x86_64-avx2", .vendor = "amd"},
                   {.rows = 256, .cols = 1024}).threads;
}
)");
  write_text(dir.path() / "vulkan_side.cpp", R"(#include "vulkan/rmsnorm.hpp"
long long vulkan_threads() {
  namespace t = ktune::tuned::vulkan::rmsnorm;
  return t::lookup({.backend = "vulkan", .device = "llvmpipe", .architecture = "lavapipe", .vendor = "mesa"},
                   {.rows = 256, .cols = 1024}).block_threads;
}
)");
  write_text(dir.path() / "main.cpp", R"(#include <cstdio>
#include "cpu/rmsnorm.hpp"
#include "vulkan/rmsnorm.hpp"
long long cpu_threads();
long long vulkan_threads();
static_assert(ktune::tuned::cpu::rmsnorm::entries.size() == 5);
static_assert(ktune::tuned::vulkan::rmsnorm::entries.size() == 1);
int main() { std::printf("cpu=%lld vulkan=%lld\n", cpu_threads(), vulkan_threads()); }
)");
  const fs::path binary = dir.path() / "two_backends";
  const std::string inc = "-I" + shell_quote((dir.path() / "tuned").string()) + " ";
  ASSERT_TRUE(compile(inc + shell_quote((dir.path() / "cpu_side.cpp").string()) + " " +
                          shell_quote((dir.path() / "vulkan_side.cpp").string()) + " " +
                          shell_quote((dir.path() / "main.cpp").string()) + " -o " + shell_quote(binary.string()),
                      dir.path() / "compile.log"));
  FILE* pipe = ::popen(shell_quote(binary.string()).c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  char line[128] = {};
  ASSERT_NE(std::fgets(line, sizeof line, pipe), nullptr);
  EXPECT_EQ(::pclose(pipe), 0);
  EXPECT_EQ(std::string(line), "cpu=2 vulkan=256\n");
}

TEST(Consumer, HeaderWithoutEntriesCompilesAndAnswersTheDefault) {
  TempDir dir;
  ExportFamily family = rmsnorm_family();
  family.entries.clear();
  family.default_config = rmsnorm_config(4, 2, 8, 1);
  const fs::path header = write_exports(family, dir.path() / "cpu");
  EXPECT_NE(read_text(header).find("std::array<TunedEntry, 0> entries{};"), std::string::npos);
  const fs::path binary = dir.path() / "consumer";
  ASSERT_TRUE(compile("-I" + shell_quote(dir.path().string()) + " " + shell_quote(consumer_source().string()) +
                          " -o " + shell_quote(binary.string()),
                      dir.path() / "compile.log"));
  expect_answer(run_consumer(binary, query(kEpyc, 256, 1024)), "default_config", "none", "4/2/8/1");
}

}  // namespace
}  // namespace ktune
