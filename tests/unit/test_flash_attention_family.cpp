// The flash_attention family: its float64 reference on cases small enough to check by hand
// (uniform and one-hot attention, the bottom-right causal mask, rows that see no key, grouped
// query heads), its problem checks, the sampled reference of long sequences, and every valid
// config of the tiled CPU kernel on odd lengths against that reference.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <set>

#include "kernels/flash_attention/flash_attention.hpp"
#include "tuner/backends/cpu/cpu_backend.hpp"
#include "tuner/core/errors.hpp"
#include "tuner/core/search_space.hpp"

namespace ktune {
namespace {

const KernelFamily& family() { return flash_attention_family(); }

Problem problem_of(const std::map<std::string, std::int64_t>& shape, Precision precision = Precision::fp32) {
  return family().make_problem(shape, precision);
}

TEST(FlashAttentionFamily, EqualScoresAverageTheValuesVisible) {
  // q = 0: every score is 0, so each row averages the values it sees. Causal, seq_q = 2 and
  // seq_kv = 3 (bottom-right): row 0 sees keys 0-1, row 1 sees keys 0-2.
  const Problem problem = problem_of({{"batch", 1}, {"heads", 1}, {"seq_q", 2}, {"seq_kv", 3}, {"head_dim", 2}, {"causal", 1}});
  HostTensors t = family().make_inputs(problem, 1);
  t[0] = {0, 0, 0, 0};
  t[2] = {1, 10, 2, 20, 6, 60};
  family().reference(problem, t);
  EXPECT_DOUBLE_EQ(t[3][0], 1.5);
  EXPECT_DOUBLE_EQ(t[3][1], 15.0);
  EXPECT_DOUBLE_EQ(t[3][2], 3.0);
  EXPECT_DOUBLE_EQ(t[3][3], 30.0);
  EXPECT_DOUBLE_EQ(t[4][0], std::log(2.0));  // log of two terms e^0
  EXPECT_DOUBLE_EQ(t[4][1], std::log(3.0));
}

TEST(FlashAttentionFamily, ScoresAreScaledByTheScaleInput) {
  // q·k = 8 for key 0 and 0 for key 1: weights e^(8 scale) and 1, for the usual scale
  // 1/sqrt(head_dim) = 1/2 and for another.
  const Problem problem = problem_of({{"batch", 1}, {"heads", 1}, {"seq_q", 1}, {"seq_kv", 2}, {"head_dim", 4}});
  for (const double scale : {0.5, 0.125}) {
    HostTensors t = family().make_inputs(problem, 1);
    t[0] = {2, 2, 2, 2};
    t[1] = {1, 1, 1, 1, 0, 0, 0, 0};
    t[2] = {1, 1, 1, 1, 0, 0, 0, 0};
    t[5] = {scale};
    family().reference(problem, t);
    const double w = std::exp(8 * scale) / (std::exp(8 * scale) + 1.0);
    for (int d = 0; d < 4; ++d) EXPECT_NEAR(t[3][d], w, 1e-15);
    EXPECT_NEAR(t[4][0], std::log(std::exp(8 * scale) + 1.0), 1e-14);
  }
}

TEST(FlashAttentionFamily, ProblemsDrawTheScaleAroundOneOverSqrtHeadDim) {
  // Never exactly the default, so a kernel that hard-codes 1/sqrt(head_dim) fails verification.
  const Problem problem = problem_of({{"head_dim", 64}});
  const auto spec = family().tensors(problem)[5];
  EXPECT_EQ(spec.name, "scale");
  EXPECT_FALSE(spec.is_output);
  EXPECT_EQ(spec.precision(problem), Precision::fp32);
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    const double scale = family().make_inputs(problem, seed)[5][0];
    EXPECT_GE(scale, 0.5 / 8);
    EXPECT_LE(scale, 1.5 / 8);
    EXPECT_NE(scale, 1.0 / 8);
  }
}

TEST(FlashAttentionFamily, RowsThatSeeNoKeyAreZeroWithInfiniteLse) {
  // seq_q = 3 > seq_kv = 1, causal: rows 0 and 1 see nothing, row 2 sees key 0.
  const Problem problem = problem_of({{"batch", 1}, {"heads", 1}, {"seq_q", 3}, {"seq_kv", 1}, {"head_dim", 1}, {"causal", 1}});
  HostTensors t = family().make_inputs(problem, 1);
  t[2] = {7};
  family().reference(problem, t);
  EXPECT_EQ(t[3], (std::vector<double>{0, 0, 7}));
  EXPECT_TRUE(std::isinf(t[4][0]) && t[4][0] > 0);
  EXPECT_TRUE(std::isinf(t[4][1]) && t[4][1] > 0);
  EXPECT_NEAR(t[4][2], t[0][2] * t[1][0] * t[5][0], 1e-15);  // one key: lse is its scaled score
}

TEST(FlashAttentionFamily, GroupedQueryHeadsShareTheirKvHead) {
  // 4 query heads on 2 kv heads: heads 0-1 read kv head 0, heads 2-3 kv head 1.
  const Problem problem = problem_of({{"batch", 1}, {"heads", 4}, {"kv_heads", 2}, {"seq_q", 1}, {"seq_kv", 1}, {"head_dim", 1}});
  EXPECT_EQ(family().tensors(problem)[1].elements, 2);
  HostTensors t = family().make_inputs(problem, 1);
  t[2] = {3, 5};
  family().reference(problem, t);
  EXPECT_EQ(t[3], (std::vector<double>{3, 3, 5, 5}));
}

TEST(FlashAttentionFamily, ProblemChecksAndTheLseIsFp32) {
  EXPECT_THROW(problem_of({{"heads", 4}, {"kv_heads", 3}}), InputError);
  EXPECT_THROW(problem_of({{"heads", 2}, {"kv_heads", 4}}), InputError);
  EXPECT_THROW(problem_of({{"causal", 2}}), InputError);
  EXPECT_THROW(problem_of({{"seq_q", 0}}), InputError);
  const Problem problem = problem_of({{"batch", 2}, {"heads", 3}, {"seq_q", 5}, {"seq_kv", 7}, {"head_dim", 64}}, Precision::bf16);
  const auto tensors = family().tensors(problem);
  EXPECT_EQ(tensors[4].precision(problem), Precision::fp32);
  EXPECT_EQ(tensors[3].precision(problem), Precision::bf16);
  EXPECT_EQ(tensors[4].bytes(problem), 2 * 3 * 5 * 4);
  EXPECT_DOUBLE_EQ(family().flop_count(problem), 4.0 * 2 * 3 * 5 * 7 * 64);
  EXPECT_DOUBLE_EQ(family().flop_count(problem_of({{"batch", 2}, {"heads", 3}, {"seq_q", 5}, {"seq_kv", 7}, {"head_dim", 64}, {"causal", 1}})),
                   2.0 * 2 * 3 * 5 * 7 * 64);
}

TEST(FlashAttentionFamily, LongSequencesCheckOneRowOfEverySixtyFourPerHead) {
  const std::int64_t heads = 2, seq = 9000;  // 2 * 9000^2 * 64 * 2 = 2e10 multiply-adds
  const Problem problem = problem_of({{"batch", 1}, {"heads", heads}, {"seq_q", seq}, {"seq_kv", seq}, {"head_dim", 64}}, Precision::bf16);
  HostTensors t = family().make_inputs(problem, 3);
  family().reference(problem, t);
  std::set<std::int64_t> groups;
  for (std::int64_t row = 0; row < heads * seq; ++row) {
    const bool computed = !std::isnan(t[4][row]);
    ASSERT_EQ(!std::isnan(t[3][row * 64]), computed);
    if (computed) EXPECT_TRUE(groups.insert(row / seq * 1000 + row % seq / 64).second) << row;
  }
  EXPECT_EQ(groups.size(), static_cast<std::size_t>(heads * ((seq + 63) / 64)));
}

MeasureSettings one_sample() {
  MeasureSettings settings;
  settings.seed = 5;
  settings.warmup_runs = 0;
  settings.stopping.min_samples = 1;
  settings.stopping.max_samples = 1;
  settings.stopping.min_time_s = 0;
  return settings;
}

TEST(FlashAttentionCpu, EveryValidConfigIsCorrectOnOddLengths) {
  CpuBackend backend;
  const SearchSpace space =
      SearchSpace::load(std::filesystem::path(KTUNE_SOURCE_DIR) / "search_spaces" / "flash_attention.cpu.json");
  // seq 1, odd lengths, causal with seq_q < seq_kv and seq_q > seq_kv, grouped-query heads.
  const std::vector<std::map<std::string, std::int64_t>> shapes{
      {{"batch", 1}, {"heads", 1}, {"seq_q", 1}, {"seq_kv", 1}, {"head_dim", 64}},
      {{"batch", 2}, {"heads", 2}, {"seq_q", 77}, {"seq_kv", 77}, {"head_dim", 64}, {"causal", 1}},
      {{"batch", 1}, {"heads", 4}, {"kv_heads", 2}, {"seq_q", 33}, {"seq_kv", 1000}, {"head_dim", 128}, {"causal", 1}},
      {{"batch", 1}, {"heads", 3}, {"kv_heads", 1}, {"seq_q", 300}, {"seq_kv", 65}, {"head_dim", 80}, {"causal", 1}},
      {{"batch", 1}, {"heads", 1}, {"seq_q", 5}, {"seq_kv", 4097}, {"head_dim", 64}}};
  std::size_t checked = 0;
  for (Precision precision : family().precisions())
    for (const auto& shape : shapes) {
      const Problem problem = problem_of(shape, precision);
      SpaceContext context;
      for (const auto& [name, value] : problem.dims) context[name] = Value{value};
      for (const auto& [name, value] : backend.device().limits) context[name] = Value{value};
      const ValidConfigs valid = space.enumerate(context);
      ASSERT_GT(valid.size(), 0u);
      for (std::size_t i = 0; i < valid.size(); ++i) {
        const Config config = valid.config(i);
        const EvaluationResult result = backend.evaluate(family(), problem, config, one_sample());
        ASSERT_EQ(result.outcome, Outcome::ok) << problem.describe() << " " << config.describe() << ": " << result.message;
        EXPECT_LE(result.error, family().tolerance(precision)) << problem.describe() << " " << config.describe();
        ++checked;
      }
    }
  EXPECT_GT(checked, 100u);
}

}  // namespace
}  // namespace ktune
