// Every valid config of every CPU family, in every precision, on odd shapes, against the
// float64 reference (the same check a tune makes, run here in-process).
#include <gtest/gtest.h>

#include <filesystem>

#include "kernels/family.hpp"
#include "tests/unit/family_descriptors.hpp"
#include "tuner/backends/cpu/cpu_backend.hpp"
#include "tuner/core/search_space.hpp"
#include "tuner/core/space_context.hpp"
#include "tuner/tune/tune_session.hpp"

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

class CpuFamilies : public ::testing::TestWithParam<std::string> {};

// Every family with CPU sources, at the odd shapes of its descriptor.
TEST_P(CpuFamilies, EveryValidConfigIsCorrectOnOddShapes) {
#if defined(__SANITIZE_ADDRESS__)
  // Under the sanitizers (4-5x slower) an even spread of 32 per shape looks for memory errors;
  // the normal build checks every config.
  constexpr std::size_t kMaxConfigs = 32;
#else
  constexpr std::size_t kMaxConfigs = 160;
#endif
  CpuBackend backend;
  const KernelFamily& family = find_family(GetParam());
  const SearchSpace space =
      SearchSpace::load(std::filesystem::path(KTUNE_SOURCE_DIR) / "search_spaces" / (GetParam() + ".cpu.json"));
  const std::vector<testing::Shape> shapes = testing::family_descriptor(GetParam()).shapes("odd");
  ASSERT_FALSE(shapes.empty()) << "kernels/*/family.json of " << GetParam() << " has no odd shapes";
  std::size_t checked = 0;
  for (Precision precision : family.precisions())
    for (const testing::Shape& shape : shapes) {
      const Problem problem = family.make_problem(shape, precision);
      const ValidConfigs valid = space.enumerate(make_context(problem, backend.device()));
      ASSERT_GT(valid.size(), 0u) << problem.describe();
      // Every valid config where there are at most kMaxConfigs (every row family at these
      // shapes); beyond that an even spread of them (GEMM's larger shapes), for CI's time.
      const std::size_t stride = (valid.size() + kMaxConfigs - 1) / kMaxConfigs;
      for (std::size_t i = 0; i < valid.size(); i += stride) {
        const Config config = valid.config(i);
        const EvaluationResult result = backend.evaluate(family, problem, config, one_sample());
        ASSERT_EQ(result.outcome, Outcome::ok)
            << problem.describe() << " " << config.describe() << ": " << result.message;
        // A family judged element by element (closeness) records its worst ratio, passing at 1.
        EXPECT_LE(result.error, family.closeness() ? 1.0 : family.tolerance(precision));
        EXPECT_EQ(result.samples_ns.size(), 1u);
        ++checked;
      }
    }
  EXPECT_GT(checked, 20u);
}

INSTANTIATE_TEST_SUITE_P(Shipped, CpuFamilies, ::testing::ValuesIn(testing::families_with_sources("cpu")));

// Copy has one dim, n: sizes below one chunk, between chunks and of odd byte counts.
TEST(CpuCopy, EveryValidConfigIsExactOnOddSizes) {
  CpuBackend backend;
  const KernelFamily& family = find_family("copy");
  const SearchSpace space = SearchSpace::load(std::filesystem::path(KTUNE_SOURCE_DIR) / "search_spaces" / "copy.cpu.json");
  std::size_t checked = 0;
  for (Precision precision : family.precisions())
    for (const std::int64_t n : {1, 17, 4097, 300001}) {
      const Problem problem = family.make_problem({{"n", n}}, precision);
      SpaceContext context{{"n", Value{n}}, {"element_bytes", Value{std::int64_t{element_bytes(precision)}}}};
      for (const auto& [name, value] : backend.device().limits) context[name] = Value{value};
      const ValidConfigs valid = space.enumerate(context);
      ASSERT_GT(valid.size(), 0u);
      for (std::size_t i = 0; i < valid.size(); ++i) {
        const EvaluationResult result = backend.evaluate(family, problem, valid.config(i), one_sample());
        ASSERT_EQ(result.outcome, Outcome::ok) << problem.describe() << " " << valid.config(i).describe() << ": " << result.message;
        EXPECT_EQ(result.error, 0.0) << "a copy is exact";
        ++checked;
      }
    }
  EXPECT_GT(checked, 20u);
}

TEST(CpuBackend, ReferenceCatchesWrongAndNaNOutputs) {
  setenv("KTUNE_ENABLE_TEST_FAMILIES", "1", 1);
  CpuBackend backend;
  const KernelFamily& family = find_family("fault_injection");
  const Problem problem = family.make_problem({{"n", 1000}}, Precision::fp32);
  auto run = [&](const char* behaviour) {
    Config config;
    config.values = {{"behaviour", Value{std::string(behaviour)}}, {"work", Value{std::int64_t{1}}}};
    return backend.evaluate(family, problem, config, one_sample());
  };
  EXPECT_EQ(run("ok").outcome, Outcome::ok);
  const auto wrong = run("wrong");
  EXPECT_EQ(wrong.outcome, Outcome::wrong_result);
  EXPECT_NE(wrong.message.find("relative L2 error"), std::string::npos) << wrong.message;
  EXPECT_EQ(run("nan").outcome, Outcome::wrong_result);
  EXPECT_EQ(run("unsupported").outcome, Outcome::unsupported);
#if !defined(__SANITIZE_ADDRESS__)
  // (AddressSanitizer's allocator aborts on a request beyond its maximum instead of throwing
  // std::bad_alloc; the integration tests cover this variant in the normal build.)
  const auto oom = run("oom");
  EXPECT_EQ(oom.outcome, Outcome::out_of_memory);
  EXPECT_NE(oom.message.find("could not be allocated"), std::string::npos) << oom.message;
#endif
}

TEST(CpuBackend, UnsupportedValueIsReportedNotCrashed) {
  CpuBackend backend;
  const KernelFamily& family = find_family("rmsnorm");
  const Problem problem = family.make_problem({{"rows", 4}, {"cols", 64}}, Precision::fp32);
  Config config;
  config.values = {{"threads", Value{std::int64_t{1}}}, {"rows_per_task", Value{std::int64_t{1}}},
                   {"vector_width", Value{std::int64_t{3}}}, {"unroll", Value{std::int64_t{1}}}};
  const auto result = backend.evaluate(family, problem, config, one_sample());
  EXPECT_EQ(result.outcome, Outcome::unsupported);
  EXPECT_NE(result.message.find("vector_width=3"), std::string::npos) << result.message;
}

TEST(NamedTensors, ReadsByNameAndNamesTheValidOnesForAnUnknownName) {
  const KernelFamily& family = find_family("rmsnorm");
  const Problem problem = family.make_problem({{"rows", 2}, {"cols", 3}}, Precision::fp32);
  HostTensors host = family.make_inputs(problem, 1);
  const auto named = family.named_tensors(problem, host);
  EXPECT_EQ(&named.at("weight"), &host[1]);
  EXPECT_EQ(&named.at("out"), &host[2]);
  try {
    named.at("gamma");
    FAIL() << "an unknown name was accepted";
  } catch (const std::logic_error& e) {
    EXPECT_STREQ(e.what(), "rmsnorm has no tensor 'gamma'; its tensors are: x, weight, out");
  }
  host.pop_back();  // fewer tensors than names: a mistake, not a read past the end
  EXPECT_THROW(family.named_tensors(problem, host).at("x"), std::logic_error);
}

// composed() answers, cheaply, whether composition() has stages: at every family's default
// problem and precisions the two agree.
TEST(KernelFamilies, ComposedSaysWhetherTheFamilyHasStages) {
  int composed = 0;
  for (const KernelFamily* family : all_families()) {
    for (const Precision precision : family->precisions()) {
      const Problem problem = family->make_problem({}, precision);
      EXPECT_EQ(family->composed(), family->composition(problem).has_value()) << family->name();
    }
    composed += family->composed();
  }
  EXPECT_GE(composed, 1);  // attention_block
}

}  // namespace
}  // namespace ktune
