// The results database: SQLite in WAL mode with numbered migrations (db/migrations/NNN_*.sql,
// embedded at build time). One transaction per result, so a kill -9 loses at most the config
// in flight. A rerun resumes: a measurement is keyed by device fingerprint, kernel source hash,
// problem and config.
//
//   auto store = Store::open("ktune.db");
//   auto device = store.upsert_device(info);
//   auto kernel = store.upsert_kernel("rmsnorm", "cpu", source_hash);
//   auto problem = store.upsert_problem(problem);
//   auto run = store.begin_run({...});
//   auto done = store.load_measurements(device, kernel, problem);   // config key -> result
//   store.record_measurement(run, device, kernel, problem, config, result);
//   store.finish_run(run, "finished", device_use);
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "db/bench_history.hpp"
#include "tuner/core/config.hpp"
#include "tuner/core/device.hpp"
#include "tuner/core/problem.hpp"
#include "tuner/measure/device_use.hpp"
#include "tuner/measure/evaluation.hpp"

namespace ktune {

struct RunInfo {
  std::string ktune_version;
  std::string git_commit;
  std::vector<std::string> argv;
  std::string hostname;
  std::string command;   // "tune", later "bench"
  std::string strategy;
  std::uint64_t seed = 0;
};

// One stored measurement with the context needed to export it.
struct StoredMeasurement {
  std::int64_t id = 0;
  std::int64_t run_id = 0;
  Config config;
  EvaluationResult result;
  std::string measured_at;  // ISO-8601 UTC
};

// The best ok measurement of one (device, kernel, problem), for exporters.
struct BestMeasurement {
  std::int64_t measurement_id = 0;
  DeviceInfo device;
  std::string family;
  std::string backend;
  std::string source_hash;
  Problem problem;
  Config config;
  SampleStatistics stats;
  double error = -1;
  std::string measured_at;
  std::string ktune_version;  // of the run that measured it
  std::string git_commit;
};

// What Store::merge_from added: new devices, runs, measurements and bench history, and the
// source's measurements this database already had (same device, kernel, problem and config).
struct MergeCounts {
  std::int64_t devices = 0;
  std::int64_t runs = 0;
  std::int64_t measurements = 0;
  std::int64_t measurements_already_present = 0;
  std::int64_t bench_runs = 0;
  std::int64_t bench_results = 0;
};

class Store {
 public:
  // Opens or creates the database and applies pending migrations. Throws InputError naming the
  // file when it is not a SQLite database, is corrupt, is not a ktune database, or was written
  // by a newer schema than this binary knows, or when the user may not write it (may_write); in
  // those cases nothing is written to the file.
  static Store open(const std::filesystem::path& path);

  // Opens an existing database without writing to it: no migration, no journal switch, and
  // nothing created beside it, so a file or folder the user may only read works
  // (store_open_read_only.cpp). Throws InputError naming the file when it is missing or empty,
  // is refused as open() refuses, or has an older schema than this ktune reads (upgrading it
  // would mean writing to it). Writing to the store then is a bug and throws std::logic_error.
  static Store open_read_only(const std::filesystem::path& path);

  // Whether this user may write the database: the file when it exists, and its folder, where
  // SQLite keeps the write-ahead log. Permission bits count for root too: a file or folder that
  // nobody may write is taken as read-only, though root could write it.
  static bool may_write(const std::filesystem::path& path);

  // For commands that need not write: export and report, which only read, and bench, which
  // keeps its history only where it may. open() when the user may write the database (an older
  // schema is upgraded, as always), open_read_only() when not.
  static Store open_as_permitted(const std::filesystem::path& path);

  Store(Store&&) noexcept;
  Store& operator=(Store&&) noexcept;
  ~Store();

  const std::filesystem::path& path() const;
  bool read_only() const;
  int schema_version() const;
  static int latest_schema_version();

  std::int64_t upsert_device(const DeviceInfo& device);
  std::int64_t upsert_kernel(const std::string& family, const std::string& backend,
                             const std::string& source_hash);
  std::int64_t upsert_problem(const Problem& problem);

  std::int64_t begin_run(const RunInfo& run, std::int64_t device_id, std::int64_t kernel_id,
                         std::int64_t problem_id);
  // Ends a run with its status ("finished", "interrupted", ...) and, when given, how busy it kept
  // its devices (runs.kernel_share, between_share, configs_per_minute; NULL when not given).
  void finish_run(std::int64_t run_id, const std::string& status,
                  const std::optional<DeviceUse>& device_use = std::nullopt);
  // Notes on a run as a JSON object (how its launch was derived, ...): runs.notes.
  void set_run_notes(std::int64_t run_id, const nlohmann::json& notes);

  // Every measurement already stored for this device, kernel and problem, keyed by Config::key().
  std::map<std::string, StoredMeasurement> load_measurements(std::int64_t device_id,
                                                             std::int64_t kernel_id,
                                                             std::int64_t problem_id);
  // The stored result of one config, if any: a tuner asks again just before measuring a config
  // its start-up snapshot lacked, because another process tuning the same problem into the same
  // database may have measured it since.
  std::optional<StoredMeasurement> find_measurement(std::int64_t device_id, std::int64_t kernel_id,
                                                    std::int64_t problem_id, const std::string& config_key);
  // Stores one result in its own transaction; returns the measurement id. A second result for
  // the same key replaces nothing and returns the existing id (measured once, never twice),
  // unless `replace_existing` asks for a re-measurement (a timeout retried with a longer limit)
  // to take the old row's place.
  std::int64_t record_measurement(std::int64_t run_id, std::int64_t device_id,
                                  std::int64_t kernel_id, std::int64_t problem_id,
                                  const Config& config, const EvaluationResult& result,
                                  bool replace_existing = false);

  // For every (device, kernel source, problem) of `family` (all families when empty): the ok
  // measurement with the lowest median. Ordered by backend, device, problem.
  std::vector<BestMeasurement> best_measurements(const std::string& family = "");
  // Families that have at least one measurement.
  std::vector<std::string> measured_families();

  // Marks 'abandoned' the runs and bench runs of `hostname` left 'running' by a process that has
  // ended (db/process_owner.hpp); returns how many. Runs of other hosts, and runs recorded
  // before owners were (schema 4), are left as they are. Says so on stderr when it marks any.
  std::size_t abandon_dead_runs(const std::string& hostname);

  // Claims a config for measurement by this process, so that another tuner of the same problem
  // does not measure it at the same time: false when it is measured already, or claimed by a
  // process that is alive (this host) or whose lease of `lease_s` seconds has not lapsed (another
  // host). Recording the measurement releases the claim; release_claims() drops what is left.
  // `remeasure`: the config is measured already and is to be measured again (a timeout retried
  // with a longer limit); only a live claim refuses then.
  bool claim(std::int64_t device_id, std::int64_t kernel_id, std::int64_t problem_id, const std::string& config_key,
             const std::string& hostname, double lease_s, bool remeasure = false);
  // Drops every claim of this process (a tune ending, however it ends).
  void release_claims();

  // A process-wide check that ends a wait for another process's lock (a stop signal); without
  // one, a write waits until the lock is free.
  static void set_stop_check(bool (*stop)());

  // Folds another ktune database into this one (store_merge.cpp), in one transaction; the
  // source is only read. InputError when it is missing, this database, or not a ktune database.
  // `should_stop`, polled while it copies and merges: true ends the merge of this source,
  // rolled back, with an exception.
  MergeCounts merge_from(const std::filesystem::path& source, const std::function<bool()>& should_stop = {});

  // Bench history (bench_history_store.cpp). Each result is stored in its own transaction.
  std::int64_t begin_bench_run(const BenchRunInfo& run, std::int64_t device_id);
  void record_bench_result(std::int64_t bench_run_id, const BenchResultRecord& result);
  void finish_bench_run(std::int64_t bench_run_id, const std::string& status);
  // Every stored bench result, ordered by run start time, then run, then result.
  std::vector<BenchHistoryEntry> bench_history();
  // Every tune's evaluations; a trace longer than `max_points` keeps an even spread of them
  // (the first and last included) plus every point that improved on the best so far.
  std::vector<TuningTrace> tuning_traces(std::size_t max_points);

 private:
  struct Impl;
  explicit Store(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ktune
