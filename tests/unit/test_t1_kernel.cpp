// The family a T1 spec makes (kernels/t1): its tensors, inputs and reference read as the spec
// says, with no GPU involved. BinaryRaw data in float and in half read back as the values written.
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

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

  ASSERT_TRUE(family->verifies());
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
  EXPECT_FALSE(family->verifies());
  const HostTensors host = family->make_inputs(family->make_problem({}, Precision::fp16), 1);
  EXPECT_EQ(host[1], (std::vector<double>{1.0, -2.5, std::ldexp(1.0, -24), 65504.0}));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ktune
