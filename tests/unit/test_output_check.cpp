// The backends' output check: the relative L2 error of stored outputs, computed in parallel
// chunks, must equal relative_l2_error over the same values taken as one vector.
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

TEST(OutputCheck, MatchesRelativeL2ErrorOverAllOutputsInParallel) {
  // Large enough to be split over several threads, with a second, odd-sized output.
  std::mt19937_64 random(7);
  std::normal_distribution<double> normal;
  std::vector<double> expected_a(3'000'001), expected_b(4097);
  for (double& v : expected_a) v = normal(random);
  for (double& v : expected_b) v = normal(random);
  const auto a = stored<cpu::bf16>(expected_a);
  const auto b = stored<cpu::bf16>(expected_b);

  std::vector<double> got_all = widened(a), expected_all = expected_a;
  const auto got_b = widened(b);
  got_all.insert(got_all.end(), got_b.begin(), got_b.end());
  expected_all.insert(expected_all.end(), expected_b.begin(), expected_b.end());

  const double error = stored_outputs_error(Precision::bf16, {{a.data(), expected_a}, {b.data(), expected_b}});
  EXPECT_GT(error, 1e-4);  // bf16 rounding is visible
  EXPECT_NEAR(error, relative_l2_error(got_all, expected_all), 1e-12 * error);
}

TEST(OutputCheck, OneNonFiniteValueAnywhereIsNaN) {
  std::vector<double> expected(2'500'000, 1.0);
  auto got = stored<float>(expected);
  EXPECT_EQ(stored_outputs_error(Precision::fp32, {{got.data(), expected}}), 0.0);
  got[2'499'999] = INFINITY;  // in the last thread's chunk
  EXPECT_TRUE(std::isnan(stored_outputs_error(Precision::fp32, {{got.data(), expected}})));
  got[2'499'999] = 1.0f;
  got[17] = NAN;  // in the first
  EXPECT_TRUE(std::isnan(stored_outputs_error(Precision::fp32, {{got.data(), expected}})));
}

TEST(OutputCheck, AbsoluteErrorWhenTheReferenceIsZero) {
  const std::vector<double> expected{0, 0};
  const std::vector<cpu::fp16> got{cpu::from_float<cpu::fp16>(0.f), cpu::from_float<cpu::fp16>(0.5f)};
  EXPECT_DOUBLE_EQ(stored_outputs_error(Precision::fp16, {{got.data(), expected}}), 0.5);
}

TEST(OutputCheck, ElementsTheReferenceLeftNaNAreNotChecked) {
  // A sampled reference (a large GEMM) computes some rows only; the others hold NaN and are
  // skipped whatever the kernel wrote there, while a checked element still counts.
  const std::vector<double> expected{1.0, NAN, 2.0, NAN};
  std::vector<float> got{1.0f, 123.0f, 2.0f, NAN};
  EXPECT_EQ(stored_outputs_error(Precision::fp32, {{got.data(), expected}}), 0.0);
  got[2] = 3.0f;
  EXPECT_GT(stored_outputs_error(Precision::fp32, {{got.data(), expected}}), 0.4);
}

}  // namespace
}  // namespace ktune
