// The order in which a learning strategy sees results (tuner/tune/observation_order.hpp) while
// one device keeps a config queued and measures later proposals first when an earlier one is
// still compiling: a resumed tune, which finds some or all results in the database at once, must
// call the strategy in exactly the order the first tune did.
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <set>
#include <string>
#include <vector>

#include "tuner/tune/observation_order.hpp"

namespace ktune {
namespace {

// A tune loop in miniature, as tune_session runs it on one device: configs 0..n-1 are proposed in
// turn ("P k") up to `lookahead` ahead of the device and as the order allows; the device takes
// the first proposed config that is in `stored` (found at once) or compiled, else the first; a
// config in `slow` compiles for 5 ticks, others for 1; the device holds two configs and finishes
// one a tick. Every observation the order releases is logged ("O k").
std::vector<std::string> strategy_calls(std::size_t n, const std::set<std::size_t>& stored,
                                        const std::set<std::size_t>& slow, std::size_t lag, std::size_t lookahead = 3) {
  ObservationOrder order(lag);
  std::vector<std::string> log;
  std::deque<std::size_t> upcoming, at_device;
  std::vector<std::size_t> proposed_at(n, 0);
  std::size_t next = 0, tick = 0;
  auto observe = [&](bool final) {
    for (ProposedConfig& p : order.ready(final)) log.push_back("O " + std::to_string(p.index));
  };
  auto compiled = [&](std::size_t k) { return tick >= proposed_at[k] + (slow.count(k) ? 5 : 1); };
  while (true) {
    bool took = true;
    while (took && at_device.size() < 2) {
      while (next < n && upcoming.size() <= lookahead && order.may_propose()) {
        log.push_back("P " + std::to_string(next));
        order.proposed(next, Config{});
        proposed_at[next] = tick;
        upcoming.push_back(next++);
      }
      took = !upcoming.empty();
      if (!took) break;
      auto chosen = upcoming.begin();
      for (auto it = upcoming.begin(); it != upcoming.end(); ++it)
        if (stored.count(*it) || compiled(*it)) {
          chosen = it;
          break;
        }
      const std::size_t k = *chosen;
      upcoming.erase(chosen);
      if (stored.count(k)) {
        order.result(k, EvaluationResult{});
        observe(false);
      } else {
        at_device.push_back(k);
      }
    }
    const bool proposing = next < n || !upcoming.empty();
    if (!proposing) observe(true);
    if (at_device.empty()) {
      if (!proposing) break;
      observe(true);  // as tune_session does when nothing is left to wait for
      continue;
    }
    ++tick;
    // The device finishes the first config whose compile is done (a slow one waits).
    auto done = at_device.begin();
    while (done != at_device.end() && !compiled(*done)) ++done;
    if (done == at_device.end()) continue;
    order.result(*done, EvaluationResult{});
    at_device.erase(done);
    observe(!proposing);
  }
  for (ProposedConfig& p : order.rest()) log.push_back("O " + std::to_string(p.index));
  return log;
}

TEST(ObservationOrder, AResumedTuneCallsTheStrategyInTheFirstTunesOrder) {
  const std::size_t lag = 6;
  const std::vector<std::string> measured = strategy_calls(20, {}, {}, lag);
  ASSERT_EQ(measured.size(), 40u);
  // P0 .. P5 first, then O0, P6, O1, P7, ...
  for (std::size_t k = 0; k < lag; ++k) EXPECT_EQ(measured[k], "P " + std::to_string(k));
  EXPECT_EQ(measured[lag], "O 0");
  EXPECT_EQ(measured[lag + 1], "P 6");
  EXPECT_EQ(measured[lag + 2], "O 1");
  EXPECT_EQ(measured.back(), "O 19");
  std::set<std::size_t> all;
  for (std::size_t k = 0; k < 20; ++k) all.insert(k);
  EXPECT_EQ(strategy_calls(20, all, {}, lag), measured);                 // everything found
  EXPECT_EQ(strategy_calls(20, {0, 1, 2}, {}, lag), measured);           // the first ones found
  EXPECT_EQ(strategy_calls(20, {1, 3, 4, 6, 11}, {}, lag), measured);    // found and measured in turn
  // Slow compiles: the device measures later configs first; the strategy cannot tell.
  EXPECT_EQ(strategy_calls(20, {}, {2, 3, 9}, lag), measured);
  EXPECT_EQ(strategy_calls(20, {5, 6}, {2, 9, 13}, lag), measured);
  EXPECT_EQ(strategy_calls(1, {}, {}, lag), strategy_calls(1, {0}, {}, lag));
}

TEST(ObservationOrder, SlowCompilesAreMeasuredAroundWithoutReordering) {
  // Unordered (lag 0): results are observed as they come, so a slow compile's result comes late.
  const std::vector<std::string> calls = strategy_calls(8, {}, {1}, 0);
  const auto at = [&](const std::string& entry) { return std::find(calls.begin(), calls.end(), entry) - calls.begin(); };
  EXPECT_GT(at("O 1"), at("O 2"));
}

TEST(ObservationOrder, ProposalsWaitForTheObservationLagBehind) {
  ObservationOrder order(2);
  order.proposed(1, Config{});
  order.proposed(2, Config{});
  EXPECT_FALSE(order.may_propose());
  order.result(2, EvaluationResult{});
  EXPECT_TRUE(order.ready(false).empty());  // 1 first
  order.result(1, EvaluationResult{});
  const auto first = order.ready(false);  // 1 (proposal 2 made); 2 waits for proposal 3
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].index, 1u);
  EXPECT_TRUE(order.may_propose());
  order.proposed(3, Config{});
  ASSERT_EQ(order.ready(false).size(), 1u);
  // Interrupted: 3 was dropped from the queue and never measured; 4 was.
  order.proposed(4, Config{});
  order.result(4, EvaluationResult{});
  EXPECT_TRUE(order.ready(true).empty());  // 3 is first and has no result
  const auto rest = order.rest();
  ASSERT_EQ(rest.size(), 1u);
  EXPECT_EQ(rest[0].index, 4u);
}

}  // namespace
}  // namespace ktune
