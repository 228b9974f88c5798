// When a learning strategy sees each result, so that one device can keep a config waiting beside
// the one it measures (the GPU no longer idles through the tuner's database writes, the
// strategy's model fit and the worker round trip) while a resumed tune still proposes exactly
// the configs the interrupted one did.
//
// The rule, the same for measured and reused configs: at most `window` configs are taken and not
// yet observed, results are observed in the order their configs were taken, and a result is
// observed only once the config after it has been taken (or nothing more will be). A tune that
// measures config k sees it after proposing k+1 because k+1 was queued while k ran; a resumed
// tune that finds k in the database holds it until it has proposed k+1. Both therefore call the
// strategy in the same order: propose k+1, observe k, propose k+2, ...
//
// Unordered (several devices, or a strategy that does not learn): every result is observed as it
// arrives and nothing limits taking.
#pragma once

#include <cstddef>
#include <deque>
#include <optional>

#include "tuner/core/config.hpp"
#include "tuner/measure/evaluation.hpp"

namespace ktune {

struct TakenConfig {
  std::size_t index;  // in the valid configs
  Config config;
  std::optional<EvaluationResult> result;  // once measured or found
};

class ObservationOrder {
 public:
  // ordered == false: observe as results arrive.
  explicit ObservationOrder(bool ordered, std::size_t window = 2) : ordered_(ordered), window_(window) {}

  // Whether another config may be taken now.
  bool may_take() const { return !ordered_ || taken_.size() < window_; }
  void taken(std::size_t index, const Config& config);
  // A taken config that will not be observed after all (another tuner is measuring it).
  void forget(std::size_t index);
  void result(std::size_t index, EvaluationResult result);
  // The results that may be observed now, in order. `final`: nothing more will be taken.
  std::deque<TakenConfig> ready(bool final);
  // At the end of the tune: every result left, in order; configs that never got one (dropped
  // from the queue by an interrupt) are skipped.
  std::deque<TakenConfig> rest();
  bool ordered() const { return ordered_; }

 private:
  bool ordered_;
  std::size_t window_;
  std::deque<TakenConfig> taken_;
};

}  // namespace ktune
