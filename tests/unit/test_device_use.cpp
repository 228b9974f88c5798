// How busy a tune kept its devices, from synthetic results: shares of the wall time per device,
// distinct configs per minute, and the summary's JSON.
#include <gtest/gtest.h>

#include "tuner/measure/device_use.hpp"
#include "tuner/measure/evaluation.hpp"
#include "tuner/tune/tune_session.hpp"

namespace ktune {
namespace {

DeviceTime device_time(double kernel_ms, double between_ms) { return {kernel_ms * 1e6, between_ms * 1e6}; }

TEST(DeviceUse, SharesOfOneDevicesWallTime) {
  DeviceUseTally tally;
  tally.add("threads=1", "cuda:0", device_time(300, 100));
  tally.add("threads=2", "cuda:0", device_time(340, 170));
  const DeviceUse use = tally.over(/*wall_seconds=*/2.0);
  EXPECT_DOUBLE_EQ(use.kernel_share, 0.32);   // 640 ms of 2 s
  EXPECT_DOUBLE_EQ(use.between_share, 0.135);  // 270 ms of 2 s
  EXPECT_DOUBLE_EQ(use.busy_share(), use.kernel_share + use.between_share);
  EXPECT_DOUBLE_EQ(use.configs_per_minute, 60.0);  // 2 configs in 2 s
}

TEST(DeviceUse, SeveralDevicesShareTheWallTime) {
  // Two devices each busy 3 s of a 4 s tune: 75% each, not 150%; their configs add up.
  DeviceUseTally tally;
  tally.add("a", "cuda:0", device_time(2000, 1000));
  tally.add("b", "rank 1 cuda:0", device_time(1000, 500));
  tally.add("c", "rank 1 cuda:0", device_time(1000, 500));
  EXPECT_EQ(tally.devices(), 2u);
  const DeviceUse use = tally.over(4.0);
  EXPECT_DOUBLE_EQ(use.kernel_share, 0.5);
  EXPECT_DOUBLE_EQ(use.between_share, 0.25);
  EXPECT_DOUBLE_EQ(use.busy_share(), 0.75);
  EXPECT_DOUBLE_EQ(use.configs_per_minute, 45.0);  // 3 configs in 4 s
}

TEST(DeviceUse, ConfigsAreCountedOnce) {
  // A config measured twice in one tune (a reference candidate, say) is one config; both
  // measurements took device time.
  DeviceUseTally tally;
  tally.add("threads=1", "cpu:0", device_time(100, 0));
  tally.add("threads=1", "cpu:0", device_time(100, 0));
  EXPECT_EQ(tally.configs(), 1u);
  const DeviceUse use = tally.over(60.0);
  EXPECT_DOUBLE_EQ(use.configs_per_minute, 1.0);
  EXPECT_DOUBLE_EQ(use.kernel_share, 0.2 / 60);
}

TEST(DeviceUse, NothingMeasuredOrNoTimeIsAllZero) {
  // A rerun that reuses every result measures nothing; results without device time (a backend
  // that does not report it) give shares of 0 but still a rate.
  const DeviceUse idle = DeviceUseTally{}.over(3.0);
  EXPECT_EQ(idle.kernel_share, 0);
  EXPECT_EQ(idle.between_share, 0);
  EXPECT_EQ(idle.configs_per_minute, 0);
  DeviceUseTally untimed;
  untimed.add("x", "cpu:0", DeviceTime{});
  const DeviceUse use = untimed.over(30.0);
  EXPECT_EQ(use.busy_share(), 0);
  EXPECT_DOUBLE_EQ(use.configs_per_minute, 2.0);
  const DeviceUse instant = untimed.over(0.0);
  EXPECT_EQ(instant.configs_per_minute, 0);
}

TEST(DeviceUse, InTheSummaryJson) {
  TuneSummary summary;
  summary.device_use = DeviceUse{.kernel_share = 0.5, .between_share = 0.25, .configs_per_minute = 12};
  const nlohmann::json json = summary.to_json();
  ASSERT_TRUE(json.contains("device_use"));
  EXPECT_EQ(json["device_use"], (nlohmann::json{{"kernel_share", 0.5},
                                                {"between_share", 0.25},
                                                {"busy_share", 0.75},
                                                {"configs_per_minute", 12.0}}));
}

TEST(DeviceUse, DeviceTimeTravelsInTheResultJson) {
  EvaluationResult result;
  result.device_time = device_time(1.5, 0.25);
  const EvaluationResult back = EvaluationResult::from_json(result.to_json());
  EXPECT_DOUBLE_EQ(back.device_time.kernel_ns, 1.5e6);
  EXPECT_DOUBLE_EQ(back.device_time.between_ns, 0.25e6);
}

}  // namespace
}  // namespace ktune
