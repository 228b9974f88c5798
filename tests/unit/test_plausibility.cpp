// Results faster than the device's memory allows are flagged (tuner/tune/plausibility.hpp), and
// only those: a time at the bound passes, and without a flushed L2 or a known bandwidth nothing
// is claimed.
#include <gtest/gtest.h>

#include "tuner/tune/plausibility.hpp"

namespace ktune {
namespace {

// An H100 SXM as the CUDA backend describes it: 2619 MHz HBM3 on a 5120-bit bus, 3.35 TB/s.
DeviceInfo h100() {
  DeviceInfo device;
  device.properties = {{"memory_clock_khz", 2619000}, {"memory_bus_width", 5120}};
  return device;
}

EvaluationResult timed(double median_ns, bool flushed = true) {
  EvaluationResult result;
  result.outcome = Outcome::ok;
  result.stats.median_ns = median_ns;
  result.environment["l2_flushed"] = flushed;
  return result;
}

TEST(Plausibility, FasterThanMemoryIsFlaggedWithTheNumbers) {
  ASSERT_NEAR(*peak_memory_bandwidth(h100()), 3.352e12, 1e9);
  // 1 GB at 3.35 TB/s takes at least 298 us.
  const std::string why = implausibility(timed(100e3), 1e9, h100());
  EXPECT_NE(why.find("timed 100 us"), std::string::npos) << why;
  EXPECT_NE(why.find("298.3 us"), std::string::npos) << why;
  EXPECT_EQ(implausibility(timed(300e3), 1e9, h100()), "");  // at 99% of the peak: possible
}

TEST(Plausibility, NothingIsClaimedWithoutTheBound) {
  EXPECT_EQ(implausibility(timed(1, /*flushed=*/false), 1e9, h100()), "");  // a warm L2 may serve it
  EXPECT_EQ(implausibility(timed(1), 1e9, DeviceInfo{}), "");               // bandwidth unknown (CPU)
  EvaluationResult failed = timed(1);
  failed.outcome = Outcome::wrong_result;
  EXPECT_EQ(implausibility(failed, 1e9, h100()), "");
}

}  // namespace
}  // namespace ktune
