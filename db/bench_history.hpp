// What `ktune bench` stores and `ktune report` reads back: bench runs and their results, and the
// trace of every tune (each evaluated config in the order it was measured). Part of Store's
// interface (store.hpp); implemented in bench_history_store.cpp.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tuner/core/config.hpp"
#include "tuner/core/outcome.hpp"

namespace ktune {

struct BenchRunInfo {
  std::string ktune_version;
  std::string git_commit;
  std::vector<std::string> argv;
  std::string hostname;
  std::string suite;  // the suite's name, or "shape" for shapes given on the command line
  int repetitions = 0;
  nlohmann::json context = nlohmann::json::object();  // the Google Benchmark "context"
};

// One benchmark of a bench run. A benchmark whose repetitions failed keeps the outcome and
// message of the failure and the repetitions that did run.
struct BenchResultRecord {
  std::string name;  // as in the Google Benchmark JSON
  std::string role;  // "tuned", "default" or "baseline"
  std::int64_t kernel_id = 0;
  std::int64_t problem_id = 0;
  Config config;
  std::string config_source;  // "database", "header", "default", ...
  std::string baseline_name;  // empty: none
  Outcome outcome = Outcome::ok;
  std::string message;
  std::vector<double> repetitions_ns;
  double bytes = 0;
  double flops = 0;
  double error = -1;
};

// One stored bench result with the run, device, kernel and problem it belongs to.
struct BenchHistoryEntry {
  std::int64_t bench_run_id = 0;
  std::string started_at;  // ISO-8601 UTC, of the run
  std::string git_commit;
  std::string ktune_version;
  std::string run_status;
  std::string device_name;
  std::string device_fingerprint;
  std::string backend;
  std::string family;
  std::string problem_key;  // Problem::key(), e.g. "rows=4096,cols=4096;bf16"
  std::string name;
  std::string role;
  nlohmann::json config;
  std::string config_source;
  std::string baseline_name;
  std::string outcome;
  std::string message;
  std::vector<double> repetitions_ns;
  double median_ns = 0;  // NaN when no repetition ran
  double min_ns = 0;
  double max_ns = 0;
  double bytes = 0;
  double flops = 0;
  double error = -1;
};

// Every evaluated config of one (device, kernel family and backend, problem), oldest first,
// across all tune runs and kernel sources.
struct TuningTrace {
  std::string device_name;
  std::string device_fingerprint;
  std::string backend;
  std::string family;
  std::string problem_key;
  std::size_t total = 0;  // evaluations stored; `points` holds a spread of them
  std::map<std::string, std::size_t> outcome_counts;  // over all `total` evaluations
  struct Point {
    std::size_t order = 0;  // 1-based position among all `total` evaluations
    nlohmann::json config;
    std::string outcome;
    double median_ns = 0;  // NaN unless ok
  };
  std::vector<Point> points;
};

}  // namespace ktune
