// The Mann-Whitney U test against reference values. Every expected number was computed with
// scipy 1.17.1: scipy.stats.mannwhitneyu(x, y, alternative="two-sided", use_continuity=True,
// method=M), M being "exact" where ktune uses the exact distribution (no ties, both sides of
// at most 10) and "asymptotic" elsewhere.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

#include "tuner/bench/mann_whitney.hpp"

namespace ktune {
namespace {

TEST(MannWhitney, FullySeparatedSmallSamplesUseTheExactDistribution) {
  const std::vector<double> x{101, 99, 100, 102, 98};
  const std::vector<double> y{111, 109, 112, 110, 108};
  const MannWhitneyResult r = mann_whitney_u(x, y);
  EXPECT_TRUE(r.exact);
  EXPECT_DOUBLE_EQ(r.u, 0);
  EXPECT_NEAR(r.p_value, 0.007936507936507936, 1e-12);  // exact: 2 / C(10, 5)
  // Swapping the samples mirrors U and keeps the two-sided p.
  const MannWhitneyResult swapped = mann_whitney_u(y, x);
  EXPECT_DOUBLE_EQ(swapped.u, 25);
  EXPECT_NEAR(swapped.p_value, r.p_value, 1e-15);
}

TEST(MannWhitney, OverlappingSamplesOfUnequalSize) {
  const std::vector<double> x{1.1, 2.3, 3.7, 4.2, 5.9, 6.4};
  const std::vector<double> y{2.9, 4.8, 5.1, 7.3, 8.8, 9.5, 10.2};
  const MannWhitneyResult r = mann_whitney_u(x, y);
  EXPECT_TRUE(r.exact);
  EXPECT_DOUBLE_EQ(r.u, 8);
  EXPECT_NEAR(r.p_value, 0.07342657342657342, 1e-12);  // exact
}

TEST(MannWhitney, OneAgainstThree) {
  const std::vector<double> x{5};
  const std::vector<double> y{1, 2, 3};
  const MannWhitneyResult r = mann_whitney_u(x, y);
  EXPECT_TRUE(r.exact);
  EXPECT_DOUBLE_EQ(r.u, 3);
  EXPECT_NEAR(r.p_value, 0.5, 1e-12);  // exact
}

TEST(MannWhitney, TiesUseTheNormalApproximationWithTieCorrection) {
  const std::vector<double> x{1, 2, 2, 3, 4};
  const std::vector<double> y{2, 3, 3, 5, 6};
  const MannWhitneyResult r = mann_whitney_u(x, y);
  EXPECT_FALSE(r.exact);
  EXPECT_DOUBLE_EQ(r.u, 6);
  EXPECT_NEAR(r.p_value, 0.19882894401644247, 1e-12);  // asymptotic
}

TEST(MannWhitney, LargerSamplesUseTheNormalApproximation) {
  const std::vector<double> x{12.1, 13.4, 11.8, 12.9, 14.2, 13.1, 12.4, 12.7, 13.9, 11.5, 12.2, 13.6};
  const std::vector<double> y{13.2, 14.5, 13.9, 14.8, 12.9, 15.1, 14.0, 13.7, 14.4, 15.6, 13.3};
  const MannWhitneyResult r = mann_whitney_u(x, y);
  EXPECT_FALSE(r.exact);
  EXPECT_DOUBLE_EQ(r.u, 18);
  EXPECT_NEAR(r.p_value, 0.0034460196289069957, 1e-12);  // asymptotic (12 > 10 a side; ties too)
}

TEST(MannWhitney, ManyTiesInLargerSamples) {
  const std::vector<double> x{10, 11, 11, 12, 12, 12, 13, 13, 14, 15, 10, 11, 12, 13, 16};
  const std::vector<double> y{12, 13, 13, 14, 14, 14, 15, 15, 16, 17, 12, 13, 14, 15, 18};
  const MannWhitneyResult r = mann_whitney_u(x, y);
  EXPECT_FALSE(r.exact);
  EXPECT_DOUBLE_EQ(r.u, 44.5);
  EXPECT_NEAR(r.p_value, 0.004605904539024261, 1e-12);  // asymptotic
}

TEST(MannWhitney, IdenticalSamplesCannotBeToldApart) {
  const std::vector<double> same{7, 7, 7, 7};
  const MannWhitneyResult r = mann_whitney_u(same, same);
  EXPECT_DOUBLE_EQ(r.p_value, 1);
  EXPECT_DOUBLE_EQ(r.u, 8);  // every pair tied: 16 pairs * 1/2
  const std::vector<double> one{3};
  EXPECT_DOUBLE_EQ(mann_whitney_u(one, one).p_value, 1);
}

TEST(MannWhitney, EmptyOrNonFiniteSamples) {
  const std::vector<double> empty;
  const std::vector<double> some{1, 2, 3};
  EXPECT_DOUBLE_EQ(mann_whitney_u(empty, some).p_value, 1);
  EXPECT_DOUBLE_EQ(mann_whitney_u(some, empty).u, 0);
  const std::vector<double> with_nan{1, NAN};
  EXPECT_THROW(mann_whitney_u(with_nan, some), std::invalid_argument);
}

TEST(MannWhitney, SmallestAttainablePValue) {
  EXPECT_NEAR(mann_whitney_smallest_p(2, 2), 0.3333333333333333, 1e-12);  // exact
  EXPECT_NEAR(mann_whitney_smallest_p(3, 3), 0.1, 1e-12);                 // exact
  EXPECT_NEAR(mann_whitney_smallest_p(3, 4), 0.05714285714285714, 1e-12);  // exact
  EXPECT_NEAR(mann_whitney_smallest_p(4, 4), 0.02857142857142857, 1e-12);  // exact
  EXPECT_NEAR(mann_whitney_smallest_p(10, 10), 1.082508822446903e-05, 1e-15);  // exact
  EXPECT_NEAR(mann_whitney_smallest_p(11, 11), 8.151536127743244e-05, 1e-15);  // asymptotic
  EXPECT_NEAR(mann_whitney_smallest_p(2, 20), 0.025943468631394163, 1e-12);    // asymptotic
  EXPECT_DOUBLE_EQ(mann_whitney_smallest_p(0, 5), 1);
}

}  // namespace
}  // namespace ktune
