#include "tuner/tune/observation_order.hpp"

#include <algorithm>

namespace ktune {

void ObservationOrder::taken(std::size_t index, const Config& config) { taken_.push_back({index, config, std::nullopt}); }

void ObservationOrder::forget(std::size_t index) {
  const auto it = std::find_if(taken_.begin(), taken_.end(), [&](const TakenConfig& t) { return t.index == index; });
  if (it != taken_.end()) taken_.erase(it);
}

void ObservationOrder::result(std::size_t index, EvaluationResult result) {
  const auto it = std::find_if(taken_.begin(), taken_.end(),
                               [&](const TakenConfig& t) { return t.index == index && !t.result; });
  if (it != taken_.end()) it->result = std::move(result);
}

std::deque<TakenConfig> ObservationOrder::ready(bool final) {
  std::deque<TakenConfig> out;
  if (!ordered_) {  // whatever has a result, as it came
    for (auto it = taken_.begin(); it != taken_.end();) {
      if (it->result) {
        out.push_back(std::move(*it));
        it = taken_.erase(it);
      } else {
        ++it;
      }
    }
    return out;
  }
  while (!taken_.empty() && taken_.front().result && (final || taken_.size() > 1)) {
    out.push_back(std::move(taken_.front()));
    taken_.pop_front();
  }
  return out;
}

std::deque<TakenConfig> ObservationOrder::rest() {
  std::deque<TakenConfig> out;
  for (TakenConfig& t : taken_)
    if (t.result) out.push_back(std::move(t));
  taken_.clear();
  return out;
}

}  // namespace ktune
