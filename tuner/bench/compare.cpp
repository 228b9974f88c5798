#include "tuner/bench/compare.hpp"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <unordered_map>

#include "tuner/bench/mann_whitney.hpp"
#include "tuner/measure/statistics.hpp"

namespace ktune {
namespace {

double relative_change(double old_ns, double new_ns) {
  if (old_ns == 0) return new_ns == 0 ? 0.0 : std::numeric_limits<double>::infinity();
  return new_ns / old_ns - 1;
}

Verdict judge(double change, bool significant, double threshold) {
  if (!significant) return Verdict::same;
  if (change > threshold) return Verdict::regression;
  if (change < -threshold) return Verdict::improvement;
  return Verdict::same;
}

BenchmarkComparison compare_pair(const BenchmarkSamples& base, const BenchmarkSamples& current,
                                 const ComparisonCriteria& criteria) {
  BenchmarkComparison pair;
  pair.name = base.name;
  pair.base_samples = base.real_time_ns.size();
  pair.new_samples = current.real_time_ns.size();
  pair.base_median_ns = summarize(base.real_time_ns).median_ns;
  pair.new_median_ns = summarize(current.real_time_ns).median_ns;
  pair.change = relative_change(pair.base_median_ns, pair.new_median_ns);

  const MannWhitneyResult test = mann_whitney_u(base.real_time_ns, current.real_time_ns);
  pair.p_value = test.p_value;
  pair.exact_p = test.exact;
  // A test that cannot reach alpha even for the most extreme outcome would call every change
  // noise; such pairs are judged by the threshold alone and say so.
  pair.significance_tested = pair.base_samples >= 2 && pair.new_samples >= 2 &&
                             mann_whitney_smallest_p(pair.base_samples, pair.new_samples) < criteria.alpha;
  const bool significant = !pair.significance_tested || pair.p_value < criteria.alpha;
  pair.verdict = judge(pair.change, significant, criteria.threshold);
  return pair;
}

// Benchmarks by name, so that pairing thousands of them stays linear.
std::unordered_map<std::string_view, const BenchmarkSamples*> index_by_name(const BenchmarkFile& file) {
  std::unordered_map<std::string_view, const BenchmarkSamples*> index;
  for (const BenchmarkSamples& b : file.benchmarks) index.emplace(b.name, &b);
  return index;
}

std::optional<std::string> context_text(const nlohmann::json& context, const char* field) {
  if (!context.is_object()) return std::nullopt;
  const auto found = context.find(field);
  if (found == context.end() || !found->is_string() || found->get_ref<const std::string&>().empty())
    return std::nullopt;
  return found->get<std::string>();
}

constexpr std::initializer_list<const char*> kDeviceFields = {"backend", "device", "device_fingerprint"};
constexpr std::initializer_list<const char*> kHostFields = {"host_name"};

bool names_a_device(const nlohmann::json& context) {
  return std::any_of(kDeviceFields.begin(), kDeviceFields.end(),
                     [&](const char* field) { return context_text(context, field).has_value(); });
}

}  // namespace

const char* to_string(Verdict verdict) {
  switch (verdict) {
    case Verdict::same: return "same";
    case Verdict::regression: return "regression";
    case Verdict::improvement: return "improvement";
  }
  return "unknown";
}

std::size_t ComparisonReport::count(Verdict verdict) const {
  return static_cast<std::size_t>(
      std::count_if(pairs.begin(), pairs.end(), [verdict](const BenchmarkComparison& p) { return p.verdict == verdict; }));
}

std::size_t ComparisonReport::untested_count() const {
  return static_cast<std::size_t>(std::count_if(pairs.begin(), pairs.end(), [](const BenchmarkComparison& p) {
    return !p.significance_tested;
  }));
}

ComparisonReport compare_benchmarks(const BenchmarkFile& base, const BenchmarkFile& current,
                                    const ComparisonCriteria& criteria) {
  if (!std::isfinite(criteria.threshold) || criteria.threshold < 0)
    throw std::invalid_argument("compare_benchmarks: threshold must be a finite number >= 0");
  if (!(criteria.alpha > 0 && criteria.alpha <= 1))
    throw std::invalid_argument("compare_benchmarks: alpha must be in (0, 1]");

  ComparisonReport report;
  report.criteria = criteria;
  const auto base_by_name = index_by_name(base);
  const auto new_by_name = index_by_name(current);
  for (const BenchmarkSamples& old_benchmark : base.benchmarks) {
    const auto found = new_by_name.find(old_benchmark.name);
    const BenchmarkSamples* new_benchmark = found == new_by_name.end() ? nullptr : found->second;
    if (new_benchmark == nullptr) {
      report.only_in_base.push_back(old_benchmark.name);
    } else if (old_benchmark.real_time_ns.empty() || new_benchmark->real_time_ns.empty()) {
      report.unmeasured.push_back({old_benchmark.name,
                                   old_benchmark.real_time_ns.empty() ? old_benchmark.error_message : "",
                                   new_benchmark->real_time_ns.empty() ? new_benchmark->error_message : ""});
    } else {
      report.pairs.push_back(compare_pair(old_benchmark, *new_benchmark, criteria));
    }
  }
  for (const BenchmarkSamples& new_benchmark : current.benchmarks)
    if (!base_by_name.contains(new_benchmark.name)) report.only_in_new.push_back(new_benchmark.name);
  return report;
}

std::vector<ContextDifference> device_differences(const nlohmann::json& base_context,
                                                  const nlohmann::json& new_context) {
  const bool both_name_a_device = names_a_device(base_context) && names_a_device(new_context);
  std::vector<ContextDifference> differences;
  for (const char* field : both_name_a_device ? kDeviceFields : kHostFields) {
    const std::optional<std::string> base_value = context_text(base_context, field);
    const std::optional<std::string> new_value = context_text(new_context, field);
    if (base_value && new_value && *base_value != *new_value) differences.push_back({field, *base_value, *new_value});
  }
  return differences;
}

}  // namespace ktune
