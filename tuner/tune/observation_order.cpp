#include "tuner/tune/observation_order.hpp"

#include <algorithm>

namespace ktune {

void ObservationOrder::proposed(std::size_t index, const Config& config) {
  proposed_.push_back({index, config, std::nullopt});
  sequence_.push_back(++proposals_);
}

void ObservationOrder::result(std::size_t index, EvaluationResult result) {
  const auto it = std::find_if(proposed_.begin(), proposed_.end(),
                               [&](const ProposedConfig& p) { return p.index == index && !p.result; });
  if (it != proposed_.end()) it->result = std::move(result);
}

std::deque<ProposedConfig> ObservationOrder::ready(bool final) {
  std::deque<ProposedConfig> out;
  if (lag_ == 0) {  // whatever has a result, as it came
    for (std::size_t i = 0; i < proposed_.size();) {
      if (proposed_[i].result) {
        out.push_back(std::move(proposed_[i]));
        proposed_.erase(proposed_.begin() + static_cast<std::ptrdiff_t>(i));
        sequence_.erase(sequence_.begin() + static_cast<std::ptrdiff_t>(i));
      } else {
        ++i;
      }
    }
    return out;
  }
  while (!proposed_.empty() && proposed_.front().result && (final || proposals_ + 1 >= sequence_.front() + lag_)) {
    out.push_back(std::move(proposed_.front()));
    proposed_.pop_front();
    sequence_.pop_front();
  }
  return out;
}

std::deque<ProposedConfig> ObservationOrder::rest() {
  std::deque<ProposedConfig> out;
  for (ProposedConfig& p : proposed_)
    if (p.result) out.push_back(std::move(p));
  proposed_.clear();
  sequence_.clear();
  return out;
}

}  // namespace ktune
