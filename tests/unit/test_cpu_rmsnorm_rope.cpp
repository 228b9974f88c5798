// Every valid config of rmsnorm_rope's CPU space, in every precision, on odd shapes (rows, heads
// and head_dim that are multiples of no vector step; head_dim 2 and 6 leave only the scalar
// tail of the rotation), against the float64 reference. test_cpu_kernels.cpp makes the same
// check for the [rows, cols] families; rmsnorm_rope has its own dims.
#include <gtest/gtest.h>

#include <filesystem>

#include "kernels/family.hpp"
#include "tuner/backends/cpu/cpu_backend.hpp"
#include "tuner/core/errors.hpp"
#include "tuner/core/search_space.hpp"

namespace ktune {
namespace {

MeasureSettings one_sample() {
  MeasureSettings settings;
  settings.seed = 99;
  settings.warmup_runs = 0;
  settings.stopping.min_samples = 1;
  settings.stopping.max_samples = 1;
  settings.stopping.min_time_s = 0;
  return settings;
}

SpaceContext space_context(const CpuBackend& backend, std::int64_t rows, std::int64_t heads, std::int64_t head_dim) {
  SpaceContext context{{"rows", Value{rows}}, {"heads", Value{heads}}, {"head_dim", Value{head_dim}}};
  for (const auto& [name, value] : backend.device().limits) context[name] = Value{value};
  return context;
}

SearchSpace load_space() {
  return SearchSpace::load(std::filesystem::path(KTUNE_SOURCE_DIR) / "search_spaces" / "rmsnorm_rope.cpu.json");
}

TEST(CpuRmsNormRope, EveryValidConfigIsCorrectOnOddShapes) {
  CpuBackend backend;
  const KernelFamily& family = find_family("rmsnorm_rope");
  const SearchSpace space = load_space();
  std::size_t checked = 0;
  for (Precision precision : family.precisions())
    for (std::int64_t rows : {1, 3, 37})
      for (std::int64_t heads : {1, 3, 5})
        for (std::int64_t head_dim : {2, 6, 64, 130}) {
          const Problem problem =
              family.make_problem({{"rows", rows}, {"heads", heads}, {"head_dim", head_dim}}, precision);
          const ValidConfigs valid = space.enumerate(space_context(backend, rows, heads, head_dim));
          ASSERT_GT(valid.size(), 0u) << problem.describe();
          for (std::size_t i = 0; i < valid.size(); ++i) {
            const Config config = valid.config(i);
            const EvaluationResult result = backend.evaluate(family, problem, config, one_sample());
            ASSERT_EQ(result.outcome, Outcome::ok)
                << problem.describe() << " " << config.describe() << ": " << result.message;
            EXPECT_LE(result.error, family.tolerance(precision)) << problem.describe() << " " << config.describe();
            EXPECT_EQ(result.samples_ns.size(), 1u);
            ++checked;
          }
        }
  EXPECT_GT(checked, 1000u);
}

// An odd head_dim has no valid config (the tune stops with a clear message) and the kernel
// reports it as unsupported rather than computing something.
TEST(CpuRmsNormRope, OddHeadDimIsRejected) {
  CpuBackend backend;
  EXPECT_EQ(load_space().enumerate(space_context(backend, 4, 2, 7)).size(), 0u);
  const KernelFamily& family = find_family("rmsnorm_rope");
  const Problem problem = family.make_problem({{"rows", 4}, {"heads", 2}, {"head_dim", 7}}, Precision::fp32);
  Config config;
  config.values = {{"threads", Value{std::int64_t{1}}}, {"rows_per_task", Value{std::int64_t{1}}},
                   {"vector_width", Value{std::int64_t{1}}}, {"unroll", Value{std::int64_t{1}}}};
  EXPECT_THROW(backend.evaluate(family, problem, config, one_sample()), InputError);
}

// The default config is valid at the family's default shape and its space is a tunable size on
// this machine (the count grows with hardware_threads through the threads parameter).
TEST(CpuRmsNormRope, DefaultIsValidAtTheDefaultShape) {
  CpuBackend backend;
  const KernelFamily& family = find_family("rmsnorm_rope");
  const SearchSpace space = load_space();
  const Problem problem = family.make_problem({}, Precision::fp32);
  const ValidConfigs valid =
      space.enumerate(space_context(backend, problem.dim("rows"), problem.dim("heads"), problem.dim("head_dim")));
  ASSERT_TRUE(space.default_config().has_value());
  EXPECT_TRUE(valid.find(*space.default_config()).has_value());
  EXPECT_GE(valid.size(), 77u);
}

}  // namespace
}  // namespace ktune
