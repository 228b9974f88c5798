// Philox4x32-10 (kernels/common/philox.hpp) against Random123's published known-answer vectors,
// the element mapping and the keep rule of softmax_dropout, and the CPU kernel's mask against the
// float64 reference's, element for element, for every valid config.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <thread>
#include <vector>

#include "kernels/common/cpu_numeric.hpp"
#include "kernels/common/philox.hpp"
#include "kernels/cpu_kernel.hpp"
#include "kernels/family.hpp"
#include "kernels/softmax_dropout/softmax_dropout.hpp"
#include "kernels/thread_pool.hpp"
#include "tuner/core/search_space.hpp"

namespace ktune {
namespace {

using philox::U32x2;
using philox::U32x4;

void expect_words(const U32x4& got, std::uint32_t a, std::uint32_t b, std::uint32_t c, std::uint32_t d) {
  EXPECT_EQ(got.v[0], a);
  EXPECT_EQ(got.v[1], b);
  EXPECT_EQ(got.v[2], c);
  EXPECT_EQ(got.v[3], d);
}

// Random123 1.09, examples/kat_vectors: "philox4x32 10 <counter x4> <key x2> <expected x4>".
TEST(Philox, Random123KnownAnswers) {
  expect_words(philox::philox4x32_10(U32x4{{0, 0, 0, 0}}, U32x2{{0, 0}}),  //
               0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u);
  expect_words(philox::philox4x32_10(U32x4{{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}},
                                     U32x2{{0xffffffffu, 0xffffffffu}}),
               0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu);
  expect_words(philox::philox4x32_10(U32x4{{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}},
                                     U32x2{{0xa4093822u, 0x299f31d0u}}),
               0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u);
}

TEST(Philox, ElementMapping) {
  const std::uint64_t seed = 0x0123456789abcdefull, offset = 0xfedcba9876543210ull;
  for (std::uint64_t i : {0ull, 1ull, 2ull, 3ull, 4ull, 5ull, 7ull, 8ull, 1001ull, (1ull << 34) + 7, ~0ull}) {
    const std::uint64_t g = i / 8;
    const U32x4 counter{{static_cast<std::uint32_t>(g), static_cast<std::uint32_t>(g >> 32),
                         static_cast<std::uint32_t>(offset), static_cast<std::uint32_t>(offset >> 32)}};
    const U32x2 key{{0x89abcdefu, 0x01234567u}};
    // Element i: half i % 2 (low half first) of word (i % 8) / 2.
    const std::uint32_t word = philox::philox4x32_10(counter, key).v[(i % 8) / 2];
    const std::uint32_t expected = i % 2 == 0 ? word & 0xffffu : word >> 16;
    EXPECT_EQ(philox::element_bits(seed, offset, i), expected) << i;
    EXPECT_EQ(philox::element_of_group(philox::group_bits(seed, offset, g), static_cast<int>(i % 8)), expected) << i;
  }
  // Offsets and seeds select different streams.
  EXPECT_NE(philox::group_bits(1, 0, 0).v[0], philox::group_bits(1, 1, 0).v[0]);
  EXPECT_NE(philox::group_bits(1, 0, 0).v[0], philox::group_bits(2, 0, 0).v[0]);
}

TEST(Philox, UniformAndKeepRule) {
  EXPECT_EQ(philox::uniform(0u), 0.0f);
  EXPECT_EQ(philox::uniform(1u), 0x1p-16f);
  EXPECT_EQ(philox::uniform(0xffffu), 1.0f - 0x1p-16f);
  // p = 0.1: 6553 * 2^-16 < 0.1 <= 6554 * 2^-16, as a float and as a double.
  const float p = static_cast<float>(kSoftmaxDropoutP);
  EXPECT_FALSE(philox::keep(6553u, p));
  EXPECT_TRUE(philox::keep(6554u, p));
  EXPECT_LT(6553.0 / 65536.0, kSoftmaxDropoutP);
  EXPECT_GE(6554.0 / 65536.0, kSoftmaxDropoutP);
  EXPECT_LT(6553.0 / 65536.0, static_cast<double>(p));
  EXPECT_GE(6554.0 / 65536.0, static_cast<double>(p));
}

TEST(Philox, DropoutKeepsNinetyPercent) {
  constexpr std::uint64_t n = 1ull << 22;
  std::uint64_t kept = 0;
  const float p = static_cast<float>(kSoftmaxDropoutP);
  for (std::uint64_t g = 0; g < n / 8; ++g) {
    const U32x4 bits = philox::group_bits(0x5eed, 0, g);  // any seed and offset
    for (int j = 0; j < 8; ++j) kept += philox::keep(philox::element_of_group(bits, j), p) ? 1 : 0;
  }
  const double fraction = static_cast<double>(kept) / static_cast<double>(n);
  // Binomial standard deviation sqrt(0.09 / 2^22) = 1.5e-4; allow about 7 of them.
  EXPECT_NEAR(fraction, 0.9, 1e-3);
}

// The kernel's dropped elements are exactly the reference's, for every valid config, in every
// precision, on rows that start off a Philox group boundary.
TEST(SoftmaxDropout, CpuMaskMatchesReferenceForEveryConfig) {
  const KernelFamily& family = find_family("softmax_dropout");
  const SearchSpace space =
      SearchSpace::load(std::filesystem::path(KTUNE_SOURCE_DIR) / "search_spaces" / "softmax_dropout.cpu.json");
  const int hardware_threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  ThreadPool pool(hardware_threads);
  std::size_t configs = 0;
  for (Precision precision : family.precisions())
    for (const auto& [rows, cols] :
         std::vector<std::pair<std::int64_t, std::int64_t>>{{37, 1001}, {5, 4097}, {3, 17}}) {
      const Problem problem = family.make_problem({{"rows", rows}, {"cols", cols}}, precision);
      HostTensors host = family.make_inputs(problem, 7);
      const std::size_t n = static_cast<std::size_t>(rows * cols);
      const int bytes = element_bytes(precision);
      std::vector<unsigned char> x(n * bytes), out(n * bytes);
      cpu::with_storage_type(precision, [&]<typename T>() {
        for (std::size_t i = 0; i < n; ++i) {
          reinterpret_cast<T*>(x.data())[i] = cpu::from_float<T>(static_cast<float>(host[0][i]));
          host[0][i] = cpu::to_float(reinterpret_cast<T*>(x.data())[i]);
        }
      });
      // The call's seed and offset (tensor 1, int32), as the device stores them.
      std::int32_t rng[2];
      for (int i = 0; i < 2; ++i) host[1][i] = rng[i] = static_cast<std::int32_t>(host[1][i]);
      family.reference(problem, host);
      std::size_t dropped = 0;
      for (double v : host[2]) dropped += v == 0.0 ? 1 : 0;
      if (n > 1000) EXPECT_NEAR(static_cast<double>(dropped) / static_cast<double>(n), 0.1, 0.01);

      const CpuTensor tensors[] = {{x.data(), static_cast<std::int64_t>(n)},
                                   {rng, 2},
                                   {out.data(), static_cast<std::int64_t>(n)}};
      const std::vector<std::string> tensor_names = family.tensor_names(problem);
      SpaceContext context{{"rows", Value{rows}}, {"cols", Value{cols}},
                           {"hardware_threads", Value{std::int64_t{hardware_threads}}}};
      const ValidConfigs valid = space.enumerate(context);
      for (std::size_t k = 0; k < valid.size(); ++k) {
        const Config config = valid.config(k);
        std::fill(out.begin(), out.end(), 0xFF);
        family.cpu_kernel()->prepare({problem, config, tensors, tensor_names, pool})();
        std::size_t mismatches = 0;
        cpu::with_storage_type(precision, [&]<typename T>() {
          for (std::size_t i = 0; i < n; ++i) {
            const double got = cpu::to_float(reinterpret_cast<const T*>(out.data())[i]);
            const double expected = host[2][i];
            // fp16 flushes kept values below its subnormal range to zero; those prove nothing.
            if (expected != 0.0 && expected < 1e-6) continue;
            mismatches += (got == 0.0) != (expected == 0.0) ? 1 : 0;
          }
        });
        EXPECT_EQ(mismatches, 0u) << problem.describe() << " " << config.describe();
        ++configs;
      }
    }
  EXPECT_GT(configs, 100u);
}

}  // namespace
}  // namespace ktune
