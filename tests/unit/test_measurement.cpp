// Statistics, the stopping rule and output verification.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "tuner/measure/statistics.hpp"
#include "tuner/measure/stopping_rule.hpp"
#include "tuner/measure/verify.hpp"

namespace ktune {
namespace {

TEST(Statistics, SummarizesOddAndEvenCounts) {
  const std::vector<double> odd{5, 1, 3};
  const auto s = summarize(odd);
  EXPECT_EQ(s.count, 3u);
  EXPECT_DOUBLE_EQ(s.median_ns, 3);
  EXPECT_DOUBLE_EQ(s.min_ns, 1);
  EXPECT_DOUBLE_EQ(s.max_ns, 5);
  EXPECT_DOUBLE_EQ(s.mean_ns, 3);
  EXPECT_DOUBLE_EQ(s.stddev_ns, 2);  // sample stddev: sqrt((4 + 0 + 4) / 2)
  EXPECT_NEAR(s.rel_stddev, 2.0 / 3.0, 1e-12);
  const std::vector<double> even{4, 1, 3, 2};
  EXPECT_DOUBLE_EQ(summarize(even).median_ns, 2.5);
  EXPECT_EQ(summarize(std::vector<double>{}).count, 0u);
}

TEST(StoppingRule, StopsWhenQuietAfterTheMinimum) {
  StoppingCriteria criteria;
  criteria.min_samples = 10;
  criteria.min_time_s = 0;
  StoppingRule rule(criteria);
  for (int i = 0; i < 9; ++i) {
    rule.add(1000.0);
    EXPECT_FALSE(rule.done()) << "stopped before the minimum sample count";
  }
  rule.add(1000.0);
  EXPECT_TRUE(rule.done());
  EXPECT_NE(rule.reason().find("noise 0.00%"), std::string::npos) << rule.reason();
}

TEST(StoppingRule, RacingStopsAClearlySlowerConfigAtItsMinimumSamples) {
  StoppingCriteria criteria;
  criteria.min_samples = 10;
  criteria.min_time_s = 1.0;  // racing does not wait for the minimum time
  criteria.race_ns = 1000;    // the best so far
  StoppingRule slow(criteria);
  for (int i = 0; i < 9; ++i) slow.add(i < 2 ? 1900.0 : 1300.0);
  EXPECT_FALSE(slow.done());
  slow.add(1300.0);  // median 1300: 1.3x the best, above the 1.25x factor
  ASSERT_TRUE(slow.done());
  EXPECT_NE(slow.reason().find("raced: median 1.30x the best so far after 10 samples"), std::string::npos)
      << slow.reason();
  // One within the factor is timed to the usual rule, however slow its outliers.
  StoppingRule close(criteria);
  for (int i = 0; i < 50; ++i) close.add(i % 5 ? 1100.0 : 5000.0);
  EXPECT_FALSE(close.done());
}

TEST(StoppingRule, NoisySamplesRunUntilTheNoiseConvergesOrTheCap) {
  StoppingCriteria criteria;
  criteria.min_time_s = 0;
  criteria.max_time_s = 1e-3;  // 1 ms of samples
  StoppingRule rule(criteria);
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> noise(0.8, 1.2);  // ~11% relative stddev
  std::size_t n = 0;
  while (!rule.done()) {
    rule.add(1000.0 * noise(rng));
    ++n;
  }
  EXPECT_GT(n, 10u);
  EXPECT_LE(n, 1300u);  // 1 ms of ~1 us samples, plus slack
  EXPECT_TRUE(rule.reason().find("converged") != std::string::npos ||
              rule.reason().find("time cap") != std::string::npos)
      << rule.reason();
}

TEST(StoppingRule, TimeCapWins) {
  StoppingCriteria criteria;
  criteria.max_time_s = 0.5;
  StoppingRule rule(criteria);
  rule.add(0.6e9);  // one 0.6 s sample
  EXPECT_TRUE(rule.done());
  EXPECT_NE(rule.reason().find("time cap"), std::string::npos);
}

TEST(Verify, RelativeL2Error) {
  const std::vector<double> expected{3, 4};
  EXPECT_DOUBLE_EQ(relative_l2_error(expected, expected), 0);
  const std::vector<double> off{3, 4.5};
  EXPECT_NEAR(relative_l2_error(off, expected), 0.1, 1e-12);
  const std::vector<double> nan{3, NAN};
  EXPECT_TRUE(std::isnan(relative_l2_error(nan, expected)));
  const std::vector<double> inf{INFINITY, 4};
  EXPECT_TRUE(std::isnan(relative_l2_error(inf, expected)));
  const std::vector<double> zeros{0, 0}, small{0, 1e-3};
  EXPECT_NEAR(relative_l2_error(small, zeros), 1e-3, 1e-15);  // absolute when the reference is 0
}

TEST(Verify, JudgeNeverPassesNaN) {
  EXPECT_TRUE(judge_error(1e-6, 1e-5).passed);
  EXPECT_FALSE(judge_error(2e-5, 1e-5).passed);
  EXPECT_FALSE(judge_error(NAN, 1e-5).passed);
  EXPECT_NE(judge_error(2e-5, 1e-5).message.find("2.00e-05 > tolerance 1.0e-05"), std::string::npos);
}

}  // namespace
}  // namespace ktune
