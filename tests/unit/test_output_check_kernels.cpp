// The element functions of the CUDA backend's on-device output check (kernels/common/
// output_check.cuh), compiled for the host: every fp16 and bf16 bit pattern decodes to the value
// the host check reads, and judging the elements one by one gives stored_outputs_closeness's figure
// to the bit (and stored_outputs_error's relative L2 error up to the order of the additions), NaN,
// infinities and unchecked elements included. The kernels around them (a grid-
// stride loop, a block reduction, two atomics) run on the GPU only (test_t1_tune.py).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernels/common/cpu_numeric.hpp"
#include "tuner/backends/output_check.hpp"

// What the device code takes from CUDA, for the host.
#define __device__
inline double __longlong_as_double(long long bits) {
  double value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}
inline float __int_as_float(int bits) {
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}
using std::fabs;
using std::fmax;
using std::sqrt;
using std::ldexp;
#define KT_OUTPUT_CHECK_HOST
#include "kernels/common/output_check.cuh"
#undef __device__

namespace ktune {
namespace {

bool same(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

TEST(OutputCheckKernels, DecodeEveryHalfAndBfloat16AsTheHostDoes) {
  for (unsigned bits = 0; bits < 65536; ++bits) {
    const auto h = static_cast<unsigned short>(bits);
    cpu::fp16 half;
    std::memcpy(&half, &h, sizeof half);
    ASSERT_TRUE(same(kt_half_value(h), cpu::to_double(half))) << std::hex << bits;
    ASSERT_TRUE(same(kt_bf16_value(h), cpu::to_double(cpu::bf16{h}))) << std::hex << bits;
  }
}

// The device's figure: every element judged in order, as a grid-stride loop and a max-reduction
// would (max is order-free), NaN when any element was bad.
template <typename T, typename Decode>
double device_figure(const std::vector<T>& got, const std::vector<double>& expected, double atol, double rtol,
                     Decode decode) {
  double worst = 0;
  unsigned bad = 0;
  for (std::size_t i = 0; i < got.size(); ++i) kt_judge(decode(got[i]), expected[i], atol, rtol, worst, bad);
  return bad ? NAN : worst;
}

TEST(OutputCheckKernels, JudgeAsStoredOutputsClosenessDoes) {
  std::mt19937_64 random(11);
  std::normal_distribution<double> normal;
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> expected(100'003);
  for (double& v : expected) v = normal(random);
  std::vector<float> got(expected.size());
  for (std::size_t i = 0; i < got.size(); ++i) got[i] = static_cast<float>(expected[i] * (1 + 1e-6 * normal(random)));
  expected[5] = NAN;  // not checked, whatever got holds
  got[5] = std::numeric_limits<float>::quiet_NaN();
  expected[6] = 0;  // zero reference: the absolute tolerance alone
  got[6] = 3e-7f;
  expected[7] = -inf;  // an infinite reference matched exactly
  got[7] = -std::numeric_limits<float>::infinity();
  auto both = [&](double atol, double rtol) {
    const double host = stored_outputs_closeness({{got.data(), Precision::fp32, expected}}, atol, rtol);
    const double device = device_figure(got, expected, atol, rtol, [](float v) { return static_cast<double>(v); });
    EXPECT_TRUE(same(host, device)) << "host " << host << " device " << device;
    return device;
  };
  EXPECT_GT(both(1e-6, 1e-5), 0);
  EXPECT_GT(both(0, 0), 1);  // no tolerance: the largest difference over nothing is infinite
  got[8] = std::numeric_limits<float>::infinity();  // a value that is not finite where the reference is
  EXPECT_TRUE(std::isnan(both(1e-6, 1e-5)));
  got[8] = static_cast<float>(expected[8]);
  expected[9] = inf;  // an infinite reference missed
  EXPECT_TRUE(std::isnan(both(1e-6, 1e-5)));

  // Integers: exact, through double.
  std::vector<std::int32_t> ints{0, -7, 1 << 30, 5};
  std::vector<double> int_expected{0, -7, 1 << 30, 6};
  const double host = stored_outputs_closeness({{ints.data(), Precision::int32, int_expected}}, 0.5, 0);
  EXPECT_EQ(host, device_figure(ints, int_expected, 0.5, 0, [](std::int32_t v) { return static_cast<double>(v); }));
  EXPECT_EQ(host, 2.0);
}

// The device's relative L2 error: elements summed in 7 interleaved parts (a grid-stride loop's
// threads), the parts added in order, as the blocks' sums are on the host.
template <typename T, typename Decode>
double device_l2(const std::vector<T>& got, const std::vector<double>& expected, Decode decode) {
  constexpr std::size_t kParts = 7;
  double diff_sq[kParts] = {}, ref_sq[kParts] = {};
  unsigned bad = 0;
  for (std::size_t i = 0; i < got.size(); ++i) kt_l2(decode(got[i]), expected[i], diff_sq[i % kParts], ref_sq[i % kParts], bad);
  if (bad) return NAN;
  double diff = 0, ref = 0;
  for (std::size_t p = 0; p < kParts; ++p) {
    diff += diff_sq[p];
    ref += ref_sq[p];
  }
  return ref > 0 ? std::sqrt(diff / ref) : std::sqrt(diff);
}

TEST(OutputCheckKernels, RelativeL2AsStoredOutputsErrorDoes) {
  std::mt19937_64 random(12);
  std::normal_distribution<double> normal;
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> expected(100'003);
  for (double& v : expected) v = normal(random);
  std::vector<std::uint16_t> got(expected.size());  // bf16: the high half of the float
  auto store = [](double v) {
    const float f = static_cast<float>(v);
    std::uint32_t bits;
    std::memcpy(&bits, &f, sizeof bits);
    return static_cast<std::uint16_t>(bits >> 16);
  };
  for (std::size_t i = 0; i < got.size(); ++i) got[i] = store(expected[i]);
  expected[5] = NAN;  // not checked, whatever got holds
  got[5] = 0x7fc0;
  expected[7] = -inf;  // an infinite reference matched exactly (attention's lse of an empty row)
  got[7] = 0xff80;
  auto both = [&] {
    const double host = stored_outputs_error({{got.data(), Precision::bf16, expected}});
    const double device = device_l2(got, expected, [](std::uint16_t v) { return kt_bf16_value(v); });
    if (std::isnan(host) || std::isnan(device)) EXPECT_TRUE(std::isnan(host) && std::isnan(device));
    else EXPECT_NEAR(device, host, 1e-12 * host) << "host " << host << " device " << device;
    return device;
  };
  const double error = both();
  EXPECT_GT(error, 1e-4);  // bf16 truncation: about 2^-9 relative
  EXPECT_LT(error, 1e-2);
  got[8] = 0x7f80;  // an infinite value where the reference is finite
  EXPECT_TRUE(std::isnan(both()));
  got[8] = store(expected[8]);
  expected[9] = inf;  // an infinite reference missed
  EXPECT_TRUE(std::isnan(both()));
}

}  // namespace
}  // namespace ktune
