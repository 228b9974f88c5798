// Writes benchmark results as Google Benchmark JSON (the format of --benchmark_out), so that
// Google Benchmark's compare.py, dashboards that read that format, and `ktune compare` accept
// ktune's bench output:
//   - one "iteration" entry per repetition: real_time (and cpu_time, the same: a GPU kernel's
//     time is not CPU time) is that repetition's median launch time in nanoseconds, iterations
//     its number of timed launches;
//   - with two or more repetitions, the aggregates mean, median, stddev and cv after them;
//   - counters on every entry: bytes_per_second, flops_per_second and, when the benchmark has a
//     baseline, percent_of_baseline (its speed as a percentage of the baseline's median speed);
//     for memory-bound kernels on a device whose peak is known, percent_of_peak_bandwidth;
//   - a failed benchmark is one entry with error_occurred and error_message.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ktune {

struct BenchmarkRecord {
  std::string name;
  std::string label;                   // shown by Google Benchmark next to the name
  std::vector<double> repetitions_ns;  // one time per repetition
  std::vector<std::size_t> iterations; // timed launches per repetition
  double bytes = 0;                    // per launch
  double flops = 0;
  std::optional<double> baseline_ns;   // the baseline's median, when there is one
  std::optional<double> peak_bytes_per_second;  // the device's theoretical memory bandwidth
  std::string error_message;           // non-empty: the benchmark failed
};

nlohmann::json make_benchmark_json(const nlohmann::json& context, const std::vector<BenchmarkRecord>& records);

}  // namespace ktune
