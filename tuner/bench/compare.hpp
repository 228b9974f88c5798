// Pairs the benchmarks of two Google Benchmark files by name and judges each pair: did the
// median time change by more than a threshold, and is the change more than noise (the
// Mann-Whitney U test on the repetitions)?
//
//   const ComparisonReport report =
//       compare_benchmarks(load_benchmark_json("base.json"), load_benchmark_json("new.json"), {});
//   if (report.count(Verdict::regression) > 0) ...  // a CI gate fails here
//
// Verdict of a pair with change = new median / old median - 1:
//   regression   change > +threshold and p < alpha
//   improvement  change < -threshold and p < alpha
//   same         otherwise
// When the test cannot decide (either side has fewer than 2 samples, or the sample sizes are
// so small that even the most extreme outcome has p >= alpha, e.g. 3 repetitions a side at
// alpha 0.05), the verdict follows the threshold alone and the pair is marked as not
// significance-tested; a gate treats its regression like any other, so a file without
// repetitions is still checked.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tuner/bench/benchmark_json.hpp"

namespace ktune {

enum class Verdict { same, regression, improvement };
const char* to_string(Verdict verdict);

struct ComparisonCriteria {
  double threshold = 0.05;  // relative change of the median that counts (0.05 = 5%)
  double alpha = 0.05;      // significance level of the test
};

struct BenchmarkComparison {
  std::string name;
  std::size_t base_samples = 0;
  std::size_t new_samples = 0;
  double base_median_ns = 0;
  double new_median_ns = 0;
  double change = 0;   // new / old - 1; +infinity when only the old median is 0
  double p_value = 1;  // two-sided Mann-Whitney U
  bool exact_p = false;
  bool significance_tested = true;  // false: too few repetitions, verdict from the threshold
  Verdict verdict = Verdict::same;
};

// A benchmark present in both files that has no samples on at least one side (the run
// reported an error or a skip there).
struct UnmeasuredBenchmark {
  std::string name;
  std::string base_error;  // empty when the base side was measured
  std::string new_error;
};

struct ComparisonReport {
  ComparisonCriteria criteria;
  std::vector<BenchmarkComparison> pairs;     // in the order of the base file
  std::vector<std::string> only_in_new;       // new benchmarks
  std::vector<std::string> only_in_base;      // missing benchmarks
  std::vector<UnmeasuredBenchmark> unmeasured;

  std::size_t count(Verdict verdict) const;
  std::size_t untested_count() const;  // pairs judged by the threshold alone
};

// Throws std::invalid_argument for a threshold that is negative or not finite, or alpha outside
// (0, 1]: callers check user input first and name their option.
ComparisonReport compare_benchmarks(const BenchmarkFile& base, const BenchmarkFile& current,
                                    const ComparisonCriteria& criteria);

// A field of two runs' "context" objects that says they ran on different machines.
struct ContextDifference {
  std::string field;  // e.g. "device", "host_name"
  std::string base_value;
  std::string new_value;
};

// Where the contexts of two runs name different devices; empty when they agree or do not say.
// ktune's bench names its device ("backend", "device", and a "device_fingerprint" that covers
// the model and driver); when both contexts do, those are compared and the host is not, since
// identical GPUs in different hosts time alike. Otherwise (any other Google Benchmark program)
// the host is all that identifies the machine, so "host_name" is compared. A field is compared
// only when both contexts carry it as a non-empty string.
std::vector<ContextDifference> device_differences(const nlohmann::json& base_context,
                                                  const nlohmann::json& new_context);

}  // namespace ktune
