// The gemm family's problem and float64 reference, on matrices small enough to check by hand:
// both layouts of B, every epilogue, alpha and beta, and the sampled reference of large shapes.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "kernels/common/cpu_numeric.hpp"
#include "kernels/gemm/gemm.hpp"
#include "tuner/core/errors.hpp"

namespace ktune {
namespace {

// A = [[1, 2], [3, 4]] (m = 2, k = 2); B with rows of B^T [5, 6] and [7, 8], so A·B =
// [[17, 23], [39, 53]]; alpha 0.5, beta 2, C = [[1, 2], [3, 4]], bias [1, -20].
HostTensors small_problem(const Problem& problem, bool b_is_nk) {
  HostTensors tensors = gemm_family().make_inputs(problem, 1);
  tensors[0] = {1, 2, 3, 4};
  tensors[1] = b_is_nk ? std::vector<double>{5, 6, 7, 8} : std::vector<double>{5, 7, 6, 8};
  if (tensors[2].size() == 4) tensors[2] = {1, 2, 3, 4};
  tensors[3] = {1, -20};
  tensors[4] = {0.5, 2.0};
  return tensors;
}

std::vector<double> reference_of(int layout, int epilogue) {
  const Problem problem =
      gemm_family().make_problem({{"m", 2}, {"n", 2}, {"k", 2}, {"b_layout", layout}, {"epilogue", epilogue}}, Precision::fp32);
  HostTensors tensors = small_problem(problem, layout == 0);
  gemm_family().reference(problem, tensors);
  return tensors[5];
}

double gelu(double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }
double silu(double x) { return x / (1 + std::exp(-x)); }

TEST(GemmFamily, ReferenceOfEveryEpilogueAndLayout) {
  for (int layout : {0, 1}) {
    SCOPED_TRACE("b_layout=" + std::to_string(layout));
    EXPECT_EQ(reference_of(layout, 0), (std::vector<double>{8.5, 11.5, 19.5, 26.5}));
    EXPECT_EQ(reference_of(layout, 1), (std::vector<double>{10.5, 15.5, 25.5, 34.5}));
    EXPECT_EQ(reference_of(layout, 2), (std::vector<double>{9.5, -8.5, 20.5, 6.5}));
    EXPECT_EQ(reference_of(layout, 5), (std::vector<double>{11.5, -4.5, 26.5, 14.5}));  // + bias + beta*C
    const auto with_gelu = reference_of(layout, 3), with_silu = reference_of(layout, 4);
    const double pre[] = {9.5, -8.5, 20.5, 6.5};
    for (int i = 0; i < 4; ++i) {
      EXPECT_DOUBLE_EQ(with_gelu[i], gelu(pre[i]));
      EXPECT_DOUBLE_EQ(with_silu[i], silu(pre[i]));
    }
  }
}

TEST(GemmFamily, CIsAFullTensorOnlyWhenTheEpilogueReadsIt) {
  const auto shape = [](int epilogue) {
    return gemm_family().make_problem({{"m", 3}, {"n", 5}, {"k", 7}, {"epilogue", epilogue}}, Precision::bf16);
  };
  EXPECT_EQ(gemm_family().tensors(shape(1))[2].elements, 15);
  EXPECT_EQ(gemm_family().tensors(shape(5))[2].elements, 15);
  EXPECT_EQ(gemm_family().tensors(shape(0))[2].elements, 1);
  EXPECT_EQ(gemm_family().tensors(shape(0))[1].elements, 35);
  EXPECT_DOUBLE_EQ(gemm_family().flop_count(shape(0)), 2.0 * 3 * 5 * 7);
}

TEST(GemmFamily, BadOptionsAndSizesAreInputErrors) {
  EXPECT_THROW(gemm_family().make_problem({{"b_layout", 2}}, Precision::fp32), InputError);
  EXPECT_THROW(gemm_family().make_problem({{"epilogue", 6}}, Precision::fp32), InputError);
  EXPECT_THROW(gemm_family().make_problem({{"m", 0}}, Precision::fp32), InputError);
  EXPECT_THROW(gemm_family().make_problem({{"b_layout", -1}}, Precision::fp32), InputError);
  // m*k = 2^42 elements: too large, although each dim is fine.
  EXPECT_THROW(gemm_family().make_problem({{"m", 1 << 21}, {"k", 1 << 21}}, Precision::fp32), InputError);
  // m*n*k past 2^40 is fine: no tensor holds that many elements.
  EXPECT_NO_THROW(gemm_family().make_problem({{"m", 16384}, {"n", 8192}, {"k", 14336}}, Precision::bf16));
}

TEST(GemmFamily, LargeProblemsCheckOneRowOfEverySixtyFour) {
  // 1000 x 96 x 50000 = 4.8e9 multiply-adds, past the full-reference limit.
  const std::int64_t m = 1000, n = 96;
  const Problem problem = gemm_family().make_problem({{"m", m}, {"n", n}, {"k", 50000}}, Precision::bf16);
  HostTensors tensors = gemm_family().make_inputs(problem, 3);
  gemm_family().reference(problem, tensors);
  std::set<std::int64_t> checked_groups;
  for (std::int64_t r = 0; r < m; ++r) {
    const bool computed = !std::isnan(tensors[5][r * n]);
    for (std::int64_t j = 0; j < n; ++j) ASSERT_EQ(!std::isnan(tensors[5][r * n + j]), computed) << r;
    if (computed) EXPECT_TRUE(checked_groups.insert(r / 64).second) << "two rows of group " << r / 64;
  }
  EXPECT_EQ(checked_groups.size(), 16u);  // every group of 64 rows, the short last one too
}

TEST(GemmPrecisions, Fp8E4m3RoundsToNearestEvenAndSaturates) {
  const auto bits = [](float x) { return cpu::from_float<cpu::fp8_e4m3>(x).bits; };
  EXPECT_EQ(bits(1.0f), 0x38);
  EXPECT_EQ(bits(-2.0f), 0xc0);
  EXPECT_EQ(bits(448.0f), 0x7e);
  EXPECT_EQ(bits(1000.0f), 0x7e);     // satfinite, as the GPU converts
  EXPECT_EQ(bits(0x1p-9f), 0x01);     // the smallest subnormal
  EXPECT_EQ(bits(1.0625f), 0x38);     // halfway between 1 and 1.125: to the even code
  EXPECT_EQ(bits(1.1875f), 0x3a);     // halfway between 1.125 and 1.25: to the even code (1.25)
  EXPECT_EQ(bits(NAN) & 0x7f, 0x7f);
  for (int code = 0; code < 0x7f; ++code) {  // every finite code survives a round trip
    const float value = cpu::to_float(cpu::fp8_e4m3{static_cast<std::uint8_t>(code)});
    EXPECT_EQ(bits(value), code) << value;
  }
}

TEST(GemmPrecisions, Tf32KeepsTenMantissaBitsRoundingToEven) {
  const auto rounded = [](float x) { return cpu::to_float(cpu::from_float<cpu::tf32>(x)); };
  EXPECT_EQ(rounded(1.0f + 0x1p-11f), 1.0f);                 // a tie: down to the even mantissa
  EXPECT_EQ(rounded(1.0f + 3 * 0x1p-11f), 1.0f + 0x1p-9f);   // a tie: up to the even mantissa
  EXPECT_EQ(rounded(1.0f + 0x1p-10f), 1.0f + 0x1p-10f);      // representable: unchanged
  EXPECT_TRUE(std::isinf(rounded(INFINITY)));
}

}  // namespace
}  // namespace ktune
