// Change-point detection (E-divisive means) on synthetic histories whose level changes are known.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <vector>

#include "tuner/core/split_mix.hpp"
#include "tuner/report/change_points.hpp"

namespace ktune {
namespace {

// A level for each stretch of a history: `length` points around `level`.
struct Stretch {
  std::size_t length;
  double level;
};

// Points around each stretch's level with roughly Gaussian noise of relative size `noise` (the
// sum of twelve uniforms, minus six, has mean 0 and standard deviation 1), seeded so every run
// sees the same history.
std::vector<double> history(const std::vector<Stretch>& stretches, double noise, std::uint64_t seed) {
  SplitMix rng(seed);
  std::vector<double> series;
  for (const Stretch& stretch : stretches)
    for (std::size_t i = 0; i < stretch.length; ++i) {
      double normal = -6;
      for (int k = 0; k < 12; ++k) normal += rng.uniform();
      series.push_back(stretch.level * (1 + noise * normal));
    }
  return series;
}

double mean_of(const std::vector<double>& series, std::size_t begin, std::size_t end) {
  double sum = 0;
  for (std::size_t i = begin; i < end; ++i) sum += series[i];
  return sum / static_cast<double>(end - begin);
}

TEST(ChangePoints, FlatNoisySeriesHasNone) {
  for (std::uint64_t seed = 1; seed <= 10; ++seed)
    EXPECT_TRUE(detect_change_points(history({{60, 100}}, 0.01, seed)).empty()) << "noise seed " << seed;
}

TEST(ChangePoints, ConstantSeriesHasNone) {
  EXPECT_TRUE(detect_change_points(std::vector<double>(40, 5.0)).empty());
}

TEST(ChangePoints, SingleStepIsFoundAtItsIndex) {
  const std::vector<double> series = history({{30, 100}, {30, 110}}, 0.01, 3);
  const ChangePointOptions options;
  const std::vector<ChangePoint> changes = detect_change_points(series, options);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_NEAR(static_cast<double>(changes[0].index), 30, 1);
  EXPECT_LT(changes[0].p_value, options.alpha);
  EXPECT_NEAR(changes[0].relative_change, 0.10, 0.01);
  EXPECT_NEAR(changes[0].mean_before, 100, 1);
  EXPECT_NEAR(changes[0].mean_after, 110, 1);
}

TEST(ChangePoints, MeansAreThoseOfTheSegmentsBetweenChangePoints) {
  const std::vector<double> series = history({{25, 100}, {25, 90}, {25, 120}}, 0.01, 4);
  const std::vector<ChangePoint> changes = detect_change_points(series);
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_DOUBLE_EQ(changes[0].mean_before, mean_of(series, 0, changes[0].index));
  EXPECT_DOUBLE_EQ(changes[0].mean_after, mean_of(series, changes[0].index, changes[1].index));
  EXPECT_DOUBLE_EQ(changes[1].mean_before, changes[0].mean_after);
  EXPECT_DOUBLE_EQ(changes[1].mean_after, mean_of(series, changes[1].index, series.size()));
  EXPECT_DOUBLE_EQ(changes[1].relative_change, changes[1].mean_after / changes[1].mean_before - 1);
}

TEST(ChangePoints, StepUpThenDownFindsBoth) {
  const std::vector<double> series = history({{30, 100}, {30, 110}, {30, 100}}, 0.01, 5);
  const std::vector<ChangePoint> changes = detect_change_points(series);
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_NEAR(static_cast<double>(changes[0].index), 30, 1);
  EXPECT_NEAR(static_cast<double>(changes[1].index), 60, 1);
  EXPECT_GT(changes[0].relative_change, 0.08);
  EXPECT_LT(changes[1].relative_change, -0.07);
}

TEST(ChangePoints, ShiftInsideTheNoiseIsNotReported) {
  for (std::uint64_t seed = 1; seed <= 5; ++seed)
    EXPECT_TRUE(detect_change_points(history({{30, 100}, {30, 100.3}}, 0.03, seed)).empty()) << "noise seed " << seed;
}

TEST(ChangePoints, MinRelativeChangeDropsSmallRealShifts) {
  // A 1% step in 0.1% noise is real and found, but under a 2% floor it is dropped.
  const std::vector<double> series = history({{30, 100}, {30, 101}}, 0.001, 6);
  const std::vector<ChangePoint> found = detect_change_points(series);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NEAR(found[0].relative_change, 0.01, 0.002);
  EXPECT_TRUE(detect_change_points(series, {.min_relative_change = 0.02}).empty());
}

TEST(ChangePoints, MinRelativeChangeKeepsLargeShiftsAndMergesAroundDroppedOnes) {
  // Steps of +1% at 30 and +10% at 60: with a 2% floor only the second remains, and its "before"
  // mean then spans everything from the start.
  const std::vector<double> series = history({{30, 100}, {30, 101}, {30, 111.1}}, 0.001, 7);
  ASSERT_EQ(detect_change_points(series).size(), 2u);
  const std::vector<ChangePoint> large = detect_change_points(series, {.min_relative_change = 0.02});
  ASSERT_EQ(large.size(), 1u);
  EXPECT_NEAR(static_cast<double>(large[0].index), 60, 1);
  EXPECT_DOUBLE_EQ(large[0].mean_before, mean_of(series, 0, large[0].index));
}

TEST(ChangePoints, MinSegmentIsRespected) {
  // The step comes six points after the start: found there while min_segment allows a segment
  // of six, and at the nearest allowed index, min_segment, beyond that.
  const std::vector<double> series = history({{6, 100}, {30, 130}}, 0.01, 8);
  for (std::size_t min_segment : {1u, 3u, 6u, 8u, 12u}) {
    const std::vector<ChangePoint> changes = detect_change_points(series, {.min_segment = min_segment});
    ASSERT_EQ(changes.size(), 1u) << "min_segment " << min_segment;
    EXPECT_EQ(changes[0].index, std::max<std::size_t>(6, min_segment)) << "min_segment " << min_segment;
  }
  // Every segment, the first and last included, keeps min_segment points.
  const std::vector<double> busy = history({{4, 100}, {10, 130}, {5, 100}, {12, 125}, {9, 90}}, 0.01, 9);
  for (std::size_t min_segment : {1u, 2u, 4u, 7u}) {
    std::size_t segment_start = 0;
    for (const ChangePoint& change : detect_change_points(busy, {.alpha = 0.05, .min_segment = min_segment})) {
      EXPECT_GE(change.index - segment_start, min_segment) << "min_segment " << min_segment;
      segment_start = change.index;
    }
    EXPECT_GE(busy.size() - segment_start, min_segment) << "min_segment " << min_segment;
  }
}

TEST(ChangePoints, ShortSeriesReturnEmpty) {
  EXPECT_TRUE(detect_change_points({}).empty());
  EXPECT_TRUE(detect_change_points({1.0}).empty());
  EXPECT_TRUE(detect_change_points({1, 1, 1, 9, 9}, {.min_segment = 3}).empty());
  EXPECT_TRUE(detect_change_points(history({{5, 100}, {4, 200}}, 0.01, 9), {.min_segment = 5}).empty());
}

TEST(ChangePoints, BadOptionsThrow) {
  const std::vector<double> series = history({{20, 100}}, 0.01, 10);
  EXPECT_THROW(detect_change_points(series, {.alpha = 0}), std::invalid_argument);
  EXPECT_THROW(detect_change_points(series, {.alpha = 1}), std::invalid_argument);
  EXPECT_THROW(detect_change_points(series, {.alpha = -0.5}), std::invalid_argument);
  EXPECT_THROW(detect_change_points(series, {.alpha = std::nan("")}), std::invalid_argument);
  EXPECT_THROW(detect_change_points(series, {.permutations = 0}), std::invalid_argument);
  EXPECT_THROW(detect_change_points(series, {.min_segment = 0}), std::invalid_argument);
  EXPECT_THROW(detect_change_points(series, {.min_relative_change = -0.01}), std::invalid_argument);
  // Checked even when the series is too short to split.
  EXPECT_THROW(detect_change_points({}, {.permutations = 0}), std::invalid_argument);
}

TEST(ChangePoints, NonFiniteValueThrows) {
  std::vector<double> series = history({{20, 100}}, 0.01, 11);
  series[7] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(detect_change_points(series), std::invalid_argument);
  series[7] = std::numeric_limits<double>::infinity();
  EXPECT_THROW(detect_change_points(series), std::invalid_argument);
}

TEST(ChangePoints, SameSeedSameResult) {
  // Shifts of about half a percent in 1% noise: found, with p-values that depend on the shuffles.
  const std::vector<double> series = history({{40, 100}, {40, 100.5}, {40, 99.7}}, 0.01, 12);
  for (std::uint64_t seed : {1u, 42u}) {
    const std::vector<ChangePoint> first = detect_change_points(series, {.alpha = 0.2, .seed = seed});
    const std::vector<ChangePoint> second = detect_change_points(series, {.alpha = 0.2, .seed = seed});
    ASSERT_FALSE(first.empty());
    ASSERT_EQ(first.size(), second.size());
    for (std::size_t c = 0; c < first.size(); ++c) {
      EXPECT_EQ(first[c].index, second[c].index);
      EXPECT_EQ(first[c].p_value, second[c].p_value);
      EXPECT_EQ(first[c].relative_change, second[c].relative_change);
    }
  }
  // The p-values are multiples of 1 / (permutations + 1): here seed 1 gives 2/200 at index 59
  // and seed 42 gives 4/200, so the seed is really used.
  EXPECT_NE(detect_change_points(series, {.alpha = 0.2, .seed = 1})[0].p_value,
            detect_change_points(series, {.alpha = 0.2, .seed = 42})[0].p_value);
}

TEST(ChangePoints, SingleSpikeIsNotTwoChangePoints) {
  // One run 50% slow in a flat history is an outlier, not a level that started and ended: it
  // cannot form a segment of min_segment points, and the split next to it is no better than
  // shuffling gives, so nothing is reported.
  std::vector<double> series = history({{60, 100}}, 0.01, 13);
  series[30] *= 1.5;
  EXPECT_TRUE(detect_change_points(series).empty());
}

TEST(ChangePoints, ThousandPointsComplete) {
  const std::vector<double> series = history({{400, 100}, {300, 105}, {300, 95}}, 0.01, 14);
  const std::vector<ChangePoint> changes = detect_change_points(series);
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_NEAR(static_cast<double>(changes[0].index), 400, 3);
  EXPECT_NEAR(static_cast<double>(changes[1].index), 700, 3);
}

}  // namespace
}  // namespace ktune
