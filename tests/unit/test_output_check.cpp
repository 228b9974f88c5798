// The backends' output check: the relative L2 error of each stored output, computed in parallel
// chunks, must equal relative_l2_error over the same values; the worst output decides.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/common/cpu_numeric.hpp"
#include "tuner/backends/output_check.hpp"
#include "tuner/measure/verify.hpp"

namespace ktune {
namespace {

template <typename T>
std::vector<T> stored(const std::vector<double>& values) {
  std::vector<T> out(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) out[i] = cpu::from_float<T>(static_cast<float>(values[i]));
  return out;
}

template <typename T>
std::vector<double> widened(const std::vector<T>& values) {
  std::vector<double> out(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) out[i] = cpu::to_float(values[i]);
  return out;
}

TEST(OutputCheck, IsTheWorstOutputsRelativeL2ErrorComputedInParallel) {
  // Large enough to be split over several threads, with a second, odd-sized output in fp32.
  std::mt19937_64 random(7);
  std::normal_distribution<double> normal;
  std::vector<double> expected_a(3'000'001), expected_b(4097);
  for (double& v : expected_a) v = normal(random);
  for (double& v : expected_b) v = 10 * normal(random);
  const auto a = stored<cpu::bf16>(expected_a);
  auto b = stored<float>(expected_b);

  const double error_a = relative_l2_error(widened(a), expected_a);
  EXPECT_GT(error_a, 1e-4);  // bf16 rounding is visible
  const double error = stored_outputs_error({{a.data(), Precision::bf16, expected_a}, {b.data(), Precision::fp32, expected_b}});
  EXPECT_NEAR(error, error_a, 1e-12 * error);
  // A wrong small output is not hidden by a large, exact one: the outputs are not pooled.
  const std::vector<double> expected_small(64, 0.01);
  const std::vector<float> wrong_small(64, 0.02f);
  EXPECT_NEAR(stored_outputs_error({{b.data(), Precision::fp32, expected_b}, {wrong_small.data(), Precision::fp32, expected_small}}),
              1.0, 1e-6);
}

TEST(OutputCheck, OneNonFiniteValueAnywhereIsNaN) {
  std::vector<double> expected(2'500'000, 1.0);
  auto got = stored<float>(expected);
  EXPECT_EQ(stored_outputs_error({{got.data(), Precision::fp32, expected}}), 0.0);
  got[2'499'999] = INFINITY;  // in the last thread's chunk
  EXPECT_TRUE(std::isnan(stored_outputs_error({{got.data(), Precision::fp32, expected}})));
  got[2'499'999] = 1.0f;
  got[17] = NAN;  // in the first
  EXPECT_TRUE(std::isnan(stored_outputs_error({{got.data(), Precision::fp32, expected}})));
}

TEST(OutputCheck, AbsoluteErrorWhenTheReferenceIsZero) {
  const std::vector<double> expected{0, 0};
  const std::vector<cpu::fp16> got{cpu::from_float<cpu::fp16>(0.f), cpu::from_float<cpu::fp16>(0.5f)};
  EXPECT_DOUBLE_EQ(stored_outputs_error({{got.data(), Precision::fp16, expected}}), 0.5);
}

TEST(OutputCheck, ElementsTheReferenceLeftNaNAreNotChecked) {
  // A sampled reference (a large GEMM) computes some rows only; the others hold NaN and are
  // skipped whatever the kernel wrote there, while a checked element still counts.
  const std::vector<double> expected{1.0, NAN, 2.0, NAN};
  std::vector<float> got{1.0f, 123.0f, 2.0f, NAN};
  EXPECT_EQ(stored_outputs_error({{got.data(), Precision::fp32, expected}}), 0.0);
  got[2] = 3.0f;
  EXPECT_GT(stored_outputs_error({{got.data(), Precision::fp32, expected}}), 0.4);
}

TEST(OutputCheck, AnInfiniteReferenceMustBeMatchedExactly) {
  // Attention's log-sum-exp of a row that sees no key is +inf: the same infinity is exact,
  // anything else (a finite value, -inf) fails.
  const std::vector<double> expected{INFINITY, 2.0};
  std::vector<float> got{INFINITY, 2.0f};
  EXPECT_EQ(stored_outputs_error({{got.data(), Precision::fp32, expected}}), 0.0);
  got[0] = 1e30f;
  EXPECT_TRUE(std::isnan(stored_outputs_error({{got.data(), Precision::fp32, expected}})));
  got[0] = -INFINITY;
  EXPECT_TRUE(std::isnan(stored_outputs_error({{got.data(), Precision::fp32, expected}})));
}

}  // namespace
}  // namespace ktune
