// When a learning strategy sees each result, so that a device is never held back by the order
// of proposals: it keeps a config queued beside the one it measures (no idling through the
// tuner's database writes, the strategy's model fit and the worker round trip), and it may
// measure a later proposal first when an earlier one is still compiling. A resumed tune, which
// finds results in the database at once and in any order, still calls the strategy in exactly
// the order the interrupted one did, and so proposes the same configs.
//
// The rule, with a fixed lag L: results are observed in the order their configs were proposed;
// proposal n is made only once result n-L has been observed, and result k is observed only once
// proposal k+L-1 has been made (or nothing more will be). The strategy's calls are therefore
// always P1 .. PL, O1, P(L+1), O2, P(L+2), ... however the results came.
//
// Unordered (several devices, or a strategy that does not learn): every result is observed as it
// arrives and nothing limits proposing.
#pragma once

#include <cstddef>
#include <deque>
#include <optional>

#include "tuner/core/config.hpp"
#include "tuner/measure/evaluation.hpp"

namespace ktune {

struct ProposedConfig {
  std::size_t index;  // in the valid configs
  Config config;
  std::optional<EvaluationResult> result;  // once measured or found
};

class ObservationOrder {
 public:
  // lag 0: unordered.
  explicit ObservationOrder(std::size_t lag) : lag_(lag) {}

  // Whether the strategy may be asked for another config now.
  bool may_propose() const { return lag_ == 0 || proposed_.size() < lag_; }
  void proposed(std::size_t index, const Config& config);
  void result(std::size_t index, EvaluationResult result);
  // The results that may be observed now, in order. `final`: nothing more will be proposed.
  std::deque<ProposedConfig> ready(bool final);
  // At the end of the tune: every result left, in order; configs that never got one (dropped
  // from the queue by an interrupt) are skipped.
  std::deque<ProposedConfig> rest();

 private:
  std::size_t lag_;
  std::size_t proposals_ = 0;         // made so far
  std::deque<std::size_t> sequence_;  // the proposal number of each entry of proposed_
  std::deque<ProposedConfig> proposed_;  // proposed and not yet observed, in proposal order
};

}  // namespace ktune
