#include "tuner/strategies/prior_configs.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

namespace ktune {
namespace {

// Prior configs, as a share of the start-up: half of it scored better than all but one on the
// development spaces. They come on top of the spread-out start-up (which scored better than
// replacing part of it), so a prior from a space whose fast region differs still leaves the model
// configs from every region to learn from.
constexpr double kPriorShare = 0.5;

// Equal values; an integer and a floating-point value compare by number (T4 results and caches
// may write 64 and 64.0).
bool same_value(const Value& a, const Value& b) {
  if (a == b) return true;
  if (is_number(a) && is_number(b)) return as_double(a, "") == as_double(b, "");
  return false;
}

}  // namespace

std::vector<Config> interleave_priors(const std::vector<std::vector<Config>>& ranked_lists) {
  std::vector<Config> out;
  std::set<std::string> taken;
  std::size_t longest = 0;
  for (const auto& list : ranked_lists) longest = std::max(longest, list.size());
  for (std::size_t rank = 0; rank < longest; ++rank)
    for (const auto& list : ranked_lists)
      if (rank < list.size() && taken.insert(list[rank].key()).second) out.push_back(list[rank]);
  return out;
}

std::vector<Config> same_kernel_first(const std::vector<std::vector<Config>>& same_kernel,
                                      const std::vector<std::vector<Config>>& other_kernels) {
  std::vector<Config> out = interleave_priors(same_kernel);
  append_unseen(out, interleave_priors(other_kernels));
  return out;
}

double problem_distance(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size() || a.empty()) return std::numeric_limits<double>::infinity();
  double distance = 0;
  for (std::size_t i = 0; i < a.size(); ++i) distance += std::abs(std::log2((a[i] + 1) / (b[i] + 1)));
  return distance;
}

std::size_t append_unseen(std::vector<Config>& prior, std::vector<Config> more) {
  const std::size_t before = prior.size();
  std::set<std::string> taken;
  for (const Config& config : prior) taken.insert(config.key());
  for (Config& config : more)
    if (taken.insert(config.key()).second) prior.push_back(std::move(config));
  return prior.size() - before;
}

std::size_t prior_start_up_count(std::size_t startup, std::size_t available) {
  if (available == 0 || startup == 0) return 0;
  const auto share = static_cast<std::size_t>(std::ceil(kPriorShare * static_cast<double>(startup)));
  return std::min({share, startup > 1 ? startup - 1 : std::size_t{1}, available});
}

PriorQueue::PriorQueue(const SpaceIndex& space, const ValidConfigs& valid, const std::vector<Config>& prior) {
  const auto& parameters = valid.parameters();
  std::set<std::size_t> seen;
  for (const Config& config : prior) {
    GridPoint point;
    for (const Parameter& parameter : parameters) {
      const auto named = std::find_if(config.values.begin(), config.values.end(),
                                      [&](const auto& entry) { return entry.first == parameter.name; });
      if (named == config.values.end()) break;
      const auto value = std::find_if(parameter.values.begin(), parameter.values.end(),
                                      [&](const Value& v) { return same_value(v, named->second); });
      if (value == parameter.values.end()) break;
      point.push_back(static_cast<std::uint32_t>(value - parameter.values.begin()));
    }
    if (point.size() != parameters.size()) continue;
    if (const auto index = space.find(point); index && seen.insert(*index).second) indices_.push_back(*index);
  }
}

std::optional<std::size_t> PriorQueue::take(UnvisitedSet& unvisited) {
  while (cursor_ < indices_.size()) {
    const std::size_t index = indices_[cursor_++];
    if (unvisited.contains(index)) {
      unvisited.remove(index);
      return index;
    }
  }
  return std::nullopt;
}

}  // namespace ktune
