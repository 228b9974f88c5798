// The order in which a learning strategy sees results while one device keeps a config queued
// (tuner/tune/observation_order.hpp): a resumed tune, which finds some or all results in the
// database at once, must call the strategy in exactly the order the first tune did.
#include <gtest/gtest.h>

#include <deque>
#include <set>
#include <string>
#include <vector>

#include "tuner/tune/observation_order.hpp"

namespace ktune {
namespace {

// A tune loop in miniature, as tune_session runs it on one device with a queued config: configs
// 0..n-1 are proposed in turn ("P k"), those in `stored` come back at once, the others are
// measured one at a time in order, two at most in the device's hands, and every observation the
// order releases is logged ("O k").
std::vector<std::string> strategy_calls(std::size_t n, const std::set<std::size_t>& stored, bool ordered = true) {
  ObservationOrder order(ordered);
  std::vector<std::string> log;
  std::deque<std::size_t> in_flight;
  std::size_t next = 0;
  auto observe = [&](bool final) {
    for (TakenConfig& t : order.ready(final)) log.push_back("O " + std::to_string(t.index));
  };
  auto result_of = [](std::size_t k) {
    EvaluationResult result;
    result.message = std::to_string(k);
    return result;
  };
  while (true) {
    while (next < n && in_flight.size() < 2 && order.may_take()) {
      const std::size_t k = next++;
      log.push_back("P " + std::to_string(k));
      order.taken(k, Config{});
      if (stored.count(k)) {
        order.result(k, result_of(k));
      } else {
        in_flight.push_back(k);
      }
      observe(false);
    }
    const bool proposing = next < n;
    if (!proposing) observe(true);
    if (in_flight.empty()) {
      if (!proposing) break;
      continue;
    }
    order.result(in_flight.front(), result_of(in_flight.front()));
    in_flight.pop_front();
    observe(!proposing);
  }
  for (TakenConfig& t : order.rest()) log.push_back("O " + std::to_string(t.index));
  return log;
}

TEST(ObservationOrder, AResumedTuneCallsTheStrategyInTheFirstTunesOrder) {
  const std::vector<std::string> measured = strategy_calls(8, {});
  // Every config observed once, each after the next was proposed.
  ASSERT_EQ(measured.size(), 16u);
  EXPECT_EQ(measured[0], "P 0");
  EXPECT_EQ(measured[1], "P 1");
  EXPECT_EQ(measured[2], "O 0");
  EXPECT_EQ(measured[3], "P 2");
  EXPECT_EQ(measured.back(), "O 7");
  EXPECT_EQ(strategy_calls(8, {0, 1, 2, 3, 4, 5, 6, 7}), measured);  // everything found
  EXPECT_EQ(strategy_calls(8, {0, 1, 2}), measured);                  // the first ones found
  EXPECT_EQ(strategy_calls(8, {3}), measured);                        // one in the middle
  EXPECT_EQ(strategy_calls(8, {1, 3, 4, 6}), measured);               // found and measured in turn
  EXPECT_EQ(strategy_calls(1, {}), strategy_calls(1, {0}));
}

TEST(ObservationOrder, UnorderedObservesAsResultsArrive) {
  ObservationOrder order(false);
  order.taken(1, Config{});
  order.taken(2, Config{});
  order.taken(3, Config{});
  EXPECT_TRUE(order.may_take());
  order.result(2, EvaluationResult{});
  const auto ready = order.ready(false);
  ASSERT_EQ(ready.size(), 1u);
  EXPECT_EQ(ready[0].index, 2u);
}

TEST(ObservationOrder, AForgottenConfigAndAnInterruptedOneAreNeverObserved) {
  ObservationOrder order(true);
  order.taken(1, Config{});
  order.taken(2, Config{});
  EXPECT_FALSE(order.may_take());
  order.forget(2);  // another tuner is measuring it
  EXPECT_TRUE(order.may_take());
  order.taken(3, Config{});
  order.result(1, EvaluationResult{});
  ASSERT_EQ(order.ready(false).size(), 1u);
  // Interrupted: 3 was dropped from the queue and never measured.
  order.taken(4, Config{});
  order.result(4, EvaluationResult{});
  EXPECT_TRUE(order.ready(true).empty());  // 3 is first and has no result
  const auto rest = order.rest();
  ASSERT_EQ(rest.size(), 1u);
  EXPECT_EQ(rest[0].index, 4u);
}

}  // namespace
}  // namespace ktune
