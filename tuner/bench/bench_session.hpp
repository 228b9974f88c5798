// One `ktune bench`: the tuned config of every (family, problem) of a shape suite on one
// backend's device, timed over several repetitions, next to the family's untuned default and,
// for memory-bound families, a copy of the same bytes (the measured bandwidth ceiling). Every
// result is verified against the float64 reference like a tune's, stored in the database as
// history (one transaction per benchmark; not where the database is read-only to the user) and
// written as Google Benchmark JSON.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tuner/backends/backend.hpp"
#include "tuner/bench/benchmark_json_writer.hpp"
#include "tuner/bench/shape_suite.hpp"
#include "tuner/core/device.hpp"

namespace ktune {

struct BenchRequest {
  std::vector<std::string> kernels;  // empty: every family of the suite that the backend has
  std::string backend;
  int device_index = 0;
  ShapeSuite suite;
  int repetitions = 5;
  std::filesystem::path db = "ktune.db";
  std::filesystem::path tuned_dir;  // empty: tuned configs from the database
  bool with_default = true;          // also time the untuned default when it differs
  bool with_baseline = true;         // copy of the same bytes for memory-bound families
  MeasureSettings measure;
  double config_timeout_s = 60.0;
  double setup_timeout_s = 600.0;  // a worker preparing a problem (kDefaultSetupTimeoutSeconds)
  std::filesystem::path out;         // Google Benchmark JSON, rewritten after every benchmark
  std::vector<std::string> argv;
};

// One benchmark's result, as printed and stored.
struct BenchItem {
  std::string name;
  std::string role;  // tuned, default, baseline
  std::string family;
  Problem problem;
  Config config;
  std::string config_source;
  std::optional<Problem> tuned_at;  // the problem its config was tuned at; nullopt for a default
  std::string baseline_name;
  std::string outcome = "ok";
  std::string message;
  std::vector<double> repetitions_ns;
  std::vector<std::size_t> iterations;
  double median_ns = 0;
  double bytes = 0;
  double flops = 0;
  double error = -1;
  std::optional<double> baseline_ns;
  std::optional<double> peak_bytes_per_second;  // memory-bound kernels on a GPU whose peak is known

  // The median's speed as a percentage of the baseline's, and of the peak bandwidth, when known.
  std::optional<double> percent_of_baseline() const;
  std::optional<double> percent_of_peak() const;
};

struct BenchSummary {
  DeviceInfo device;
  std::string backend;
  std::int64_t bench_run_id = 0;
  bool history_kept = false;  // false: the database was only read (the user may not write it)
  std::vector<BenchItem> items;
  nlohmann::json context;
  bool interrupted = false;
  std::size_t failed = 0;
  double seconds = 0;

  nlohmann::json to_json() const;
};

class BenchObserver {
 public:
  virtual ~BenchObserver() = default;
  virtual void started(const BenchSummary&, std::size_t planned) { (void)planned; }
  virtual void finished_item(const BenchItem&) {}
};

// The benchmark name of a problem: "<family>/<backend>/<dim>=<v>,.../<precision>".
std::string benchmark_name(const std::string& backend, const Problem& problem);

BenchSummary run_bench(const BenchRequest& request, BenchObserver& observer);

}  // namespace ktune
