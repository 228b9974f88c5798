// Reads the JSON that Google Benchmark writes (--benchmark_format=json or --benchmark_out=FILE)
// into timing samples per benchmark, for `ktune compare`. Any program using Google Benchmark
// can be compared, not only ktune's own output.
//
//   const BenchmarkFile base = load_benchmark_json("base.json");
//   for (const BenchmarkSamples& b : base.benchmarks)
//     std::cout << b.name << ": " << b.real_time_ns.size() << " samples\n";
//
// What is read from each entry of "benchmarks":
// - the benchmark is named by "run_name" (the name without an aggregate suffix) or, in files
//   from versions before it existed, by "name";
// - "iteration" entries (one per repetition) give one sample each: "real_time", the wall time
//   per iteration, converted from "time_unit" (ns, us, ms, s) to nanoseconds;
// - "aggregate" entries (mean, median, stddev, cv, BigO, ...) are not samples. Only when a
//   benchmark has no iteration entry at all (--benchmark_report_aggregates_only) does its
//   "mean" become its single sample;
// - entries marked "error_occurred" or "skipped" give no sample; their message is kept, so a
//   benchmark that failed is reported as such rather than as missing.
// Counters, "cpu_time" and "iterations" are not read. Complexity fits (BigO, RMS) are no
// timings, so a name that has nothing but those is not a benchmark here.
//
// Malformed input throws InputError naming the file and the benchmark or member at fault; so
// does nesting deeper than 64 levels (Google Benchmark's is 4), which is no benchmark file.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace ktune {

struct BenchmarkSamples {
  std::string name;
  std::vector<double> real_time_ns;  // one per repetition, in file order; finite, >= 0
  bool from_mean_aggregate = false;  // the file held only aggregates: the sample is their mean
  std::string error_message;         // the run reported an error or a skip (then no samples)
};

struct BenchmarkFile {
  std::string source;                        // the file (or name) used in messages
  nlohmann::json context;                    // the "context" object as written (host, date, ...)
  std::vector<BenchmarkSamples> benchmarks;  // in order of first appearance, names unique

  // nullptr when there is no benchmark of that name.
  const BenchmarkSamples* find(std::string_view name) const;
};

// `source` names the text in messages (a path, or e.g. "<stdin>").
BenchmarkFile parse_benchmark_json(std::string_view text, const std::string& source);
BenchmarkFile load_benchmark_json(const std::filesystem::path& file);

}  // namespace ktune
