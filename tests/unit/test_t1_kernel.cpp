// The family a T1 spec makes (kernels/t1): its tensors, inputs and reference read as the spec
// says, with no GPU involved. BinaryRaw data in float and in half read back as the values written.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <map>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "tuner/backends/host_problem.hpp"
#include "tuner/backends/output_check.hpp"
#include "tuner/core/errors.hpp"
#include "tuner/formats/t1/t1_kernel.hpp"

namespace ktune {
namespace {

const std::filesystem::path kScaledSum =
    std::filesystem::path(KTUNE_SOURCE_DIR) / "tests/data/t1/scaled_sum/scaled_sum_T1.json";

std::vector<float> floats_in(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<float> values(bytes.size() / sizeof(float));
  std::memcpy(values.data(), bytes.data(), values.size() * sizeof(float));
  return values;
}

TEST(T1Kernel, ScaledSumReadsItsArgumentsDataAndReference) {
  const auto family = load_t1_kernel(kScaledSum);
  EXPECT_EQ(family->name(), "scaled_sum");
  ASSERT_EQ(family->precisions(), std::vector<Precision>{Precision::fp32});
  const Problem problem = family->make_problem({}, Precision::fp32);
  EXPECT_EQ(problem.dim("problem_size_0"), 100003);

  const auto tensors = family->tensors(problem);
  ASSERT_EQ(tensors.size(), 3u);  // out, x, y; alpha and n are scalars
  EXPECT_TRUE(tensors[0].is_output);
  EXPECT_FALSE(tensors[1].is_output);
  for (const auto& tensor : tensors) EXPECT_EQ(tensor.elements, 100003);

  HostTensors host = family->make_inputs(problem, 1);
  const auto x = floats_in(kScaledSum.parent_path() / "x.bin");
  ASSERT_EQ(host[1].size(), x.size());
  for (std::size_t i = 0; i < x.size(); i += 997) EXPECT_EQ(host[1][i], static_cast<double>(x[i])) << i;
  EXPECT_TRUE(std::all_of(host[0].begin(), host[0].end(), [](double v) { return v == 0.0; }));

  ASSERT_TRUE(family->verifies(problem));
  family->reference(problem, host);
  const auto expected = floats_in(kScaledSum.parent_path() / "expected_out.bin");
  for (std::size_t i = 0; i < expected.size(); i += 997) EXPECT_EQ(host[0][i], static_cast<double>(expected[i])) << i;

  // Arguments in the kernel's order: out, x, y as tensors 0-2, then float alpha and int32 n.
  const auto arguments = family->kernel_arguments(problem);
  ASSERT_EQ(arguments.size(), 5u);
  EXPECT_EQ(arguments[2].tensor, 2);
  float alpha = 0;
  std::int32_t n = 0;
  ASSERT_EQ(arguments[3].bytes.size(), sizeof alpha);
  std::memcpy(&alpha, arguments[3].bytes.data(), sizeof alpha);
  ASSERT_EQ(arguments[4].bytes.size(), sizeof n);
  std::memcpy(&n, arguments[4].bytes.data(), sizeof n);
  EXPECT_EQ(alpha, 1.5f);
  EXPECT_EQ(n, 100003);
}

TEST(T1Kernel, HalfDataReadsAsTheValuesWritten) {
  const auto dir = std::filesystem::temp_directory_path() / ("ktune-t1-half-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  // 1, -2.5, the smallest subnormal 2^-24, 65504 (the largest finite half).
  const std::array<std::uint16_t, 4> halves{0x3C00, 0xC100, 0x0001, 0x7BFF};
  std::ofstream(dir / "in.bin", std::ios::binary).write(reinterpret_cast<const char*>(halves.data()), sizeof halves);
  std::ofstream(dir / "k.cu") << "extern \"C\" __global__ void k(__half* out, const __half* in) {}\n";
  const nlohmann::json spec = {
      {"General", {{"BenchmarkName", "half_copy"}}},
      {"ConfigurationSpace", {{"TuningParameters", {{{"Name", "block_size_x"}, {"Values", "[32, 64]"}}}}}},
      {"KernelSpecification",
       {{"Language", "CUDA"}, {"KernelName", "k"}, {"KernelFile", "k.cu"}, {"ProblemSize", 4},
        {"LocalSize", {{"X", "block_size_x"}}}, {"GlobalSize", {{"X", "ProblemSize[0]"}}},
        {"Arguments",
         {{{"Name", "out"}, {"Type", "half"}, {"MemoryType", "Vector"}, {"AccessType", "WriteOnly"}, {"Size", 4}},
          {{"Name", "in"}, {"Type", "half"}, {"MemoryType", "Vector"}, {"FillType", "BinaryRaw"},
           {"DataSource", "in.bin"}, {"Size", "ProblemSize[0]"}}}}}}};
  std::ofstream(dir / "spec.json") << spec.dump();
  const auto family = load_t1_kernel(dir / "spec.json");
  ASSERT_EQ(family->precisions(), std::vector<Precision>{Precision::fp16});
  const Problem problem = family->make_problem({}, Precision::fp16);
  const HostTensors host = family->make_inputs(problem, 1);
  EXPECT_EQ(host[1], (std::vector<double>{1.0, -2.5, std::ldexp(1.0, -24), 65504.0}));
  std::filesystem::remove_all(dir);
}


// A spec of every argument kind in a temporary folder: int32 vector (Random: whole numbers),
// double vector (Constant), a ReadWrite float vector, a MemType Constant float vector, an
// Output-flagged vector, and scalars of several types.
struct ArgumentSpec {
  std::filesystem::path dir;
  ArgumentSpec() {
    dir = std::filesystem::temp_directory_path() / ("ktune-t1-args-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "k.cu") << "__constant__ float weights[16];\n"
                                   "template <typename T> __global__ void k(T* y, const int* n, const double* d,\n"
                                   "    const float* w, float* out, signed char a, unsigned long long b, double c) {}\n";
    const nlohmann::json spec = {
        {"General", {{"BenchmarkName", "every_argument"}}},
        {"ConfigurationSpace",
         {{"TuningParameters",
           {{{"Name", "block_size_x"}, {"Values", "[32, 64]"}, {"Default", 64}},
            {{"Name", "tile"}, {"Values", "[1, 2]"}, {"Default", 1}}}}}},
        {"KernelSpecification",
         {{"Language", "CUDA"}, {"KernelName", "k<float>"}, {"KernelFile", "k.cu"}, {"ProblemSize", {1000}},
          {"GridDivX", {"block_size_x", "tile"}},
          {"Arguments",
           {{{"Name", "y"}, {"Type", "float"}, {"MemoryType", "Vector"}, {"AccessType", "ReadWrite"},
             {"FillType", "Constant"}, {"FillValue", 2.5}, {"Size", "ProblemSize[0]"}},
            {{"Name", "n"}, {"Type", "int32"}, {"MemoryType", "Vector"}, {"FillType", "Random"}, {"FillValue", 9},
             {"Size", 100}},
            {{"Name", "d"}, {"Type", "double"}, {"MemoryType", "Vector"}, {"FillValue", 0.1}, {"Size", 10}},
            {{"Name", "weights"}, {"Type", "float"}, {"MemoryType", "Vector"}, {"MemType", "Constant"},
             {"FillValue", 1.0}, {"Size", 16}},
            {{"Name", "out"}, {"Type", "float"}, {"MemoryType", "Vector"}, {"Output", 1}, {"AccessType", "WriteOnly"},
             {"FillValue", 0}, {"Size", "ProblemSize[0]"}},
            {{"Name", "a"}, {"Type", "int8"}, {"MemoryType", "Scalar"}, {"FillValue", -3}},
            {{"Name", "b"}, {"Type", "uint64"}, {"MemoryType", "Scalar"}, {"FillValue", 5}},
            {{"Name", "c"}, {"Type", "double"}, {"MemoryType", "Scalar"}, {"FillValue", 0.25}}}}}}};
    std::ofstream(dir / "spec.json") << spec.dump();
  }
  ~ArgumentSpec() { std::filesystem::remove_all(dir); }
};

TEST(T1Kernel, EveryArgumentKindIsReadAsTheSpecSays) {
  ArgumentSpec files;
  const auto family = load_t1_kernel(files.dir / "spec.json");
  const Problem problem = family->make_problem({}, Precision::fp32);
  const auto tensors = family->tensors(problem);
  ASSERT_EQ(tensors.size(), 5u);
  EXPECT_TRUE(tensors[0].is_output && tensors[0].read_write);  // checked, and filled as an input
  EXPECT_EQ(tensors[1].precision(problem), Precision::int32);
  EXPECT_EQ(tensors[2].precision(problem), Precision::fp64);
  EXPECT_EQ(tensors[2].bytes(problem), 80);
  EXPECT_EQ(tensors[3].constant_symbol, "weights");
  EXPECT_FALSE(tensors[3].is_output);
  EXPECT_TRUE(tensors[4].is_output && !tensors[4].read_write);
  // The read-write vector is read and written: counted twice.
  EXPECT_EQ(family->byte_count(problem), 1000 * 4 * 2 + 100 * 4 + 10 * 8 + 16 * 4 + 1000 * 4);

  const HostTensors inputs = family->make_inputs(problem, 1);
  EXPECT_EQ(inputs[0], std::vector<double>(1000, 2.5));
  bool whole = true, spread = false;
  for (double v : inputs[1]) {
    whole = whole && v == std::floor(v) && v >= 0 && v <= 9;
    spread = spread || v != inputs[1][0];
  }
  EXPECT_TRUE(whole && spread);
  // Inputs come from the spec alone, not the tune's seed (the kept reference belongs to them).
  EXPECT_EQ(family->make_inputs(problem, 99)[1], inputs[1]);
  EXPECT_EQ(inputs[2], std::vector<double>(10, 0.1));

  // The device copies: the read-write vector is uploaded, integers and doubles stored exactly.
  const HostProblem host = make_host_problem(*family, problem, 1);
  ASSERT_EQ(host.stored[0].size(), 4000u);
  float first = 0;
  std::memcpy(&first, host.stored[0].data(), sizeof first);
  EXPECT_EQ(first, 2.5f);
  EXPECT_TRUE(host.stored[4].empty());  // a plain output is poisoned, not uploaded
  std::int32_t n0 = 0;
  std::memcpy(&n0, host.stored[1].data(), sizeof n0);
  EXPECT_EQ(static_cast<double>(n0), inputs[1][0]);
  double d0 = 0;
  std::memcpy(&d0, host.stored[2].data(), sizeof d0);
  EXPECT_EQ(d0, 0.1);  // not rounded through float

  const auto arguments = family->kernel_arguments(problem);
  ASSERT_EQ(arguments.size(), 8u);
  EXPECT_EQ(arguments[3].tensor, 3);  // the constant vector is still passed in its position
  ASSERT_EQ(arguments[5].bytes.size(), 1u);
  EXPECT_EQ(static_cast<signed char>(arguments[5].bytes[0]), -3);
  EXPECT_EQ(arguments[6].bytes.size(), 8u);
  double c = 0;
  ASSERT_EQ(arguments[7].bytes.size(), sizeof c);
  std::memcpy(&c, arguments[7].bytes.data(), sizeof c);
  EXPECT_EQ(c, 0.25);
}

TEST(T1Kernel, KernelTunerDefinesComeBeforeTheParameters) {
  ArgumentSpec files;
  const auto family = load_t1_kernel(files.dir / "spec.json");
  const Problem problem = family->make_problem({}, Precision::fp32);
  Config config;
  config.values = {{"block_size_x", Value{std::int64_t{32}}}, {"tile", Value{std::int64_t{2}}}};
  const auto defines = family->source_defines(problem, config);
  std::map<std::string, std::string> by_name(defines.begin(), defines.end());
  EXPECT_EQ(by_name.at("grid_size_x"), "16");  // ceil(1000 / 64)
  EXPECT_EQ(by_name.at("grid_size_y"), "1");
  EXPECT_EQ(by_name.at("block_size_x"), "32");
  EXPECT_EQ(by_name.at("block_size_y"), "1");
  EXPECT_EQ(by_name.at("tile"), "2");
  EXPECT_EQ(by_name.at("kernel_tuner"), "1");
  EXPECT_EQ(defines.size(), by_name.size());  // block_size_x once, though it is a parameter too
  EXPECT_EQ(family->cuda_source()->entry, "k<float>");  // a name expression for the compiler
  EXPECT_NE(family->launch_rule().find("GridDiv"), std::string::npos);
}

TEST(T1Kernel, TheDefaultConfigsOutputBecomesTheReference) {
  ArgumentSpec files;
  const auto references = files.dir / "references";
  ::setenv("KTUNE_T1_REFERENCE_DIR", references.c_str(), 1);
  const auto family = load_t1_kernel(files.dir / "spec.json", T1Options{true, 1e-6, 1e-5});
  const Problem problem = family->make_problem({}, Precision::fp32);
  EXPECT_FALSE(family->verifies(problem));
  EXPECT_TRUE(family->reference_from_config(problem));
  const std::string before = family->reference_revision(problem);

  // The trusted config's raw outputs, in tensors() order: y (read-write) then out.
  std::vector<float> y(1000, 3.0f), out(1000);
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<float>(i) * 0.5f;
  family->keep_reference(problem, {std::string_view(reinterpret_cast<const char*>(y.data()), y.size() * 4),
                                   std::string_view(reinterpret_cast<const char*>(out.data()), out.size() * 4)});
  EXPECT_TRUE(family->verifies(problem));
  EXPECT_FALSE(family->reference_from_config(problem));
  EXPECT_NE(family->reference_revision(problem), before);  // a loaded problem is prepared again
  const HostProblem host = make_host_problem(*family, problem, 1);
  EXPECT_EQ(host.expected[0], std::vector<double>(1000, 3.0));
  EXPECT_EQ(host.expected[4][10], 5.0);

  // Checked element by element: |got - expected| <= atol + rtol |expected|.
  std::vector<StoredOutput> outputs{{y.data(), Precision::fp32, host.expected[0]},
                                    {out.data(), Precision::fp32, host.expected[4]}};
  OutputCheck same = check_outputs(*family, problem, outputs);
  EXPECT_TRUE(same.verdict.passed);
  EXPECT_EQ(same.error, 0.0);
  out[10] += 5.0f * 2e-5f;  // twice what rtol allows at 5.0
  OutputCheck off = check_outputs(*family, problem, outputs);
  EXPECT_FALSE(off.verdict.passed);
  EXPECT_NEAR(off.error, 2.0, 0.1);
  EXPECT_NE(off.verdict.message.find("atol"), std::string::npos);

  // --no-verify: nothing is checked, nothing captured.
  const auto unchecked = load_t1_kernel(files.dir / "spec.json", T1Options{false, 1e-6, 1e-5});
  EXPECT_FALSE(unchecked->verifies(problem));
  EXPECT_FALSE(unchecked->reference_from_config(problem));
  EXPECT_NE(unchecked->verification(problem).find("off"), std::string::npos);

  family->drop_reference(problem);
  EXPECT_FALSE(family->verifies(problem));
  ::unsetenv("KTUNE_T1_REFERENCE_DIR");
}

TEST(T1Kernel, RefusalsNameTheMemberAndWhatWouldWork) {
  ArgumentSpec files;
  const auto spec_path = files.dir / "spec.json";
  const nlohmann::json good = nlohmann::json::parse(std::ifstream(spec_path));
  auto refused = [&](auto change, const std::string& expected) {
    nlohmann::json spec = good;
    change(spec);
    std::ofstream(spec_path) << spec.dump();
    try {
      load_t1_kernel(spec_path);
      ADD_FAILURE() << "accepted: " << expected;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(spec_path.string()), std::string::npos) << e.what();
    }
  };
  refused([](nlohmann::json& s) { s["KernelSpecification"]["Arguments"][3]["AccessType"] = "WriteOnly"; },
          "Arguments[3].MemType: a Constant vector is read-only");
  refused([](nlohmann::json& s) { s["KernelSpecification"]["Arguments"][1]["AccessType"] = "Sometimes"; },
          "Arguments[1].AccessType");
  refused([](nlohmann::json& s) { s["KernelSpecification"]["Arguments"][1]["Type"] = "float4"; },
          "Arguments[1].Type: 'float4' is not supported");
  refused([](nlohmann::json& s) { s["KernelSpecification"]["Arguments"][1]["MemoryType"] = "Local"; },
          "Arguments[1].MemoryType");
  refused([](nlohmann::json& s) { s["KernelSpecification"].erase("GridDivX"); }, "GridDivX");
}

}  // namespace
}  // namespace ktune
