// Tests of the SQLite results store: migrations, upserts, round trips, best-of selection,
// concurrent writers (threads and processes), crash recovery and refusal of foreign files.
#include "db/store.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/unit/file_bytes.hpp"
#include "tuner/core/errors.hpp"
#include "tuner/tune/tune_prior.hpp"

namespace fs = std::filesystem;
using namespace ktune;

namespace {

using ktune::testing::read_bytes;
using ktune::testing::write_bytes;

// Direct SQLite access, for checking and tampering with files behind the store's back.
class RawDb {
 public:
  explicit RawDb(const fs::path& path, int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) {
    if (sqlite3_open_v2(path.c_str(), &db_, flags, nullptr) != SQLITE_OK)
      throw std::runtime_error(std::string("open: ") + sqlite3_errmsg(db_));
  }
  ~RawDb() { sqlite3_close_v2(db_); }
  RawDb(const RawDb&) = delete;
  RawDb& operator=(const RawDb&) = delete;

  void exec(const std::string& sql) {
    char* message = nullptr;
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &message) != SQLITE_OK) {
      std::string text = message ? message : "?";
      sqlite3_free(message);
      throw std::runtime_error(sql + ": " + text);
    }
  }
  // First column of every row, as text.
  std::vector<std::string> column(const std::string& sql) {
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK)
      throw std::runtime_error(sql + ": " + sqlite3_errmsg(db_));
    std::vector<std::string> out;
    int rc;
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
      const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
      out.emplace_back(text ? text : "NULL");
    }
    sqlite3_finalize(stmt);
    if (rc != SQLITE_DONE) throw std::runtime_error(sql + ": " + sqlite3_errmsg(db_));
    return out;
  }
  std::string scalar(const std::string& sql) {
    auto rows = column(sql);
    return rows.empty() ? "" : rows.front();
  }

 private:
  sqlite3* db_ = nullptr;
};

DeviceInfo cpu_device(const std::string& fingerprint = "cpu:test-fingerprint") {
  DeviceInfo device;
  device.backend = "cpu";
  device.name = "Test CPU";
  device.vendor = "intel";
  device.architecture = "x86_64-avx2";
  device.fingerprint = fingerprint;
  device.limits = {{"hardware_threads", 8}, {"l2_bytes", 1 << 20}};
  device.properties = {{"driver", "none"}, {"clock_mhz", 3000}};
  return device;
}

Problem make_problem(std::int64_t rows, std::int64_t cols, Precision precision = Precision::fp32,
                     const std::string& family = "rmsnorm") {
  Problem problem;
  problem.family = family;
  problem.dims = {{"rows", rows}, {"cols", cols}};  // not alphabetical: order must survive
  problem.precision = precision;
  return problem;
}

Config make_config(std::int64_t threads, std::int64_t block = 4) {
  Config config;
  config.values = {{"threads", threads}, {"block", block}, {"unroll", 2.5}, {"layout", std::string("row")}};
  return config;
}

EvaluationResult ok_result(std::vector<double> samples) {
  EvaluationResult result;
  result.outcome = Outcome::ok;
  result.samples_ns = std::move(samples);
  result.stats = summarize(result.samples_ns);
  result.error = 1e-7;
  result.compile_ms = 12.5;
  result.environment = {{"clock_mhz", 2900}, {"throttled", false}};
  return result;
}

EvaluationResult failed_result(Outcome outcome, const std::string& message) {
  EvaluationResult result;
  result.outcome = outcome;
  result.message = message;
  return result;
}

RunInfo run_info() {
  RunInfo run;
  run.ktune_version = "0.1.0";
  run.git_commit = "abc123def456";
  run.argv = {"ktune", "tune", "rmsnorm", "--db", "x.db"};
  run.hostname = "testhost";
  run.command = "tune";
  run.strategy = "exhaustive";
  run.seed = 0xFFFFFFFFFFFFFFFFull;  // does not fit a signed 64-bit integer
  return run;
}

// The ids a tuning session needs, created in the given store.
struct Target {
  std::int64_t device = 0, kernel = 0, problem = 0, run = 0;
};

Target make_target(Store& store, const std::string& family = "rmsnorm",
                   const Problem& problem = make_problem(256, 1024)) {
  Target target;
  target.device = store.upsert_device(cpu_device());
  target.kernel = store.upsert_kernel(family, "cpu", "hash-" + family);
  target.problem = store.upsert_problem(problem);
  target.run = store.begin_run(run_info(), target.device, target.kernel, target.problem);
  return target;
}

// Records `count` distinct ok measurements (threads = offset + i) into its own store.
void record_many(const fs::path& path, int offset, int count) {
  Store store = Store::open(path);
  const Target target = make_target(store);
  for (int i = 0; i < count; ++i)
    store.record_measurement(target.run, target.device, target.kernel, target.problem,
                             make_config(offset + i), ok_result({100.0 + i, 101.0 + i, 99.0 + i}));
  store.finish_run(target.run, "finished");
}

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "ktune-store-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }

  // Expects Store::open to refuse `path` with an InputError naming it and containing `what`,
  // leaving the file byte for byte as it was.
  void expect_refused(const fs::path& path, const std::string& what) {
    const std::string before = read_bytes(path);
    try {
      Store::open(path);
      ADD_FAILURE() << "Store::open accepted " << path;
    } catch (const InputError& error) {
      const std::string message = error.what();
      EXPECT_NE(message.find(path.string()), std::string::npos) << message;
      EXPECT_NE(message.find(what), std::string::npos) << message;
    } catch (const std::exception& error) {
      ADD_FAILURE() << "expected InputError, got: " << error.what();
    }
    EXPECT_TRUE(read_bytes(path) == before) << path << " was modified";
  }

  // A ktune database with a few measurements, closed (checkpointed).
  fs::path make_real_db(const std::string& name) {
    const fs::path path = dir_ / name;
    Store store = Store::open(path);
    const Target target = make_target(store);
    for (int i = 0; i < 50; ++i)
      store.record_measurement(target.run, target.device, target.kernel, target.problem,
                               make_config(i), ok_result(std::vector<double>(100, 1000.0 + i)));
    return path;
  }

  fs::path dir_;
};

TEST_F(StoreTest, CreatesMigratesAndReopensWithoutReapplying) {
  const fs::path path = dir_ / "new.db";
  ASSERT_FALSE(fs::exists(path));
  {
    Store store = Store::open(path);
    EXPECT_EQ(store.path(), path);
    EXPECT_GE(Store::latest_schema_version(), 1);
    EXPECT_EQ(store.schema_version(), Store::latest_schema_version());
  }
  std::vector<std::string> applied_before;
  {
    RawDb raw(path, SQLITE_OPEN_READONLY);
    EXPECT_EQ(raw.scalar("PRAGMA application_id"), std::to_string(0x6B74756E));
    EXPECT_EQ(raw.scalar("PRAGMA user_version"), std::to_string(Store::latest_schema_version()));
    EXPECT_EQ(raw.scalar("PRAGMA journal_mode"), "wal");
    applied_before = raw.column("SELECT version || ' ' || name || ' ' || applied_at FROM schema_migrations ORDER BY version");
    ASSERT_EQ(applied_before.size(), static_cast<std::size_t>(Store::latest_schema_version()));
    EXPECT_TRUE(std::regex_match(applied_before.front(),
                                 std::regex(R"(1 initial \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)")))
        << applied_before.front();
    for (const char* table : {"devices", "kernels", "problems", "runs", "measurements"})
      EXPECT_EQ(raw.scalar(std::string("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = '") + table + "'"), "1") << table;
  }
  {
    Store again = Store::open(path);
    EXPECT_EQ(again.schema_version(), Store::latest_schema_version());
  }
  RawDb raw(path, SQLITE_OPEN_READONLY);
  EXPECT_EQ(raw.column("SELECT version || ' ' || name || ' ' || applied_at FROM schema_migrations ORDER BY version"),
            applied_before);
}

TEST_F(StoreTest, EmptyFileIsANewDatabase) {
  const fs::path path = dir_ / "empty.db";
  write_bytes(path, "");
  Store store = Store::open(path);
  EXPECT_EQ(store.schema_version(), Store::latest_schema_version());
}

// A finished run keeps how busy it kept its devices; a run finished without (a failed one) keeps
// NULL.
TEST_F(StoreTest, FinishedRunKeepsItsDeviceUse) {
  const fs::path path = dir_ / "use.db";
  std::int64_t failed_run = 0, finished_run = 0;
  {
    Store store = Store::open(path);
    const Target target = make_target(store);
    failed_run = target.run;
    store.finish_run(failed_run, "failed");
    finished_run = store.begin_run(run_info(), target.device, target.kernel, target.problem);
    store.finish_run(finished_run, "finished",
                     DeviceUse{.kernel_share = 0.625, .between_share = 0.25, .configs_per_minute = 212.5});
  }
  RawDb raw(path, SQLITE_OPEN_READONLY);
  auto row = [&](std::int64_t run) {
    return raw.scalar("SELECT status || ' ' || ifnull(kernel_share, 'NULL') || ' ' || ifnull(between_share, 'NULL') || ' ' || "
                      "ifnull(configs_per_minute, 'NULL') FROM runs WHERE id = " + std::to_string(run));
  };
  EXPECT_EQ(row(failed_run), "failed NULL NULL NULL");
  EXPECT_EQ(row(finished_run), "finished 0.625 0.25 212.5");
}

// A database of schema 5 (before runs kept their device use) opens, gains the columns with NULL
// for the runs it had, and records the device use of its next run.
TEST_F(StoreTest, OlderDatabaseGainsTheDeviceUseColumns) {
  const fs::path path = make_real_db("schema5.db");
  {
    RawDb raw(path);
    raw.exec("ALTER TABLE runs DROP COLUMN kernel_share; ALTER TABLE runs DROP COLUMN between_share; "
             "ALTER TABLE runs DROP COLUMN configs_per_minute; DELETE FROM schema_migrations WHERE version > 5; "
             "PRAGMA user_version = 5;");
  }
  Store store = Store::open(path);
  EXPECT_EQ(store.schema_version(), Store::latest_schema_version());
  const Target target = make_target(store);
  store.finish_run(target.run, "finished", DeviceUse{.kernel_share = 0.5, .between_share = 0.125, .configs_per_minute = 30});
  RawDb raw(path, SQLITE_OPEN_READONLY);
  EXPECT_EQ(raw.column("SELECT ifnull(kernel_share, 'NULL') || ' ' || ifnull(between_share, 'NULL') || ' ' || "
                       "ifnull(configs_per_minute, 'NULL') FROM runs ORDER BY id"),
            (std::vector<std::string>{"NULL NULL NULL", "0.5 0.125 30.0"}));
  EXPECT_EQ(raw.scalar("SELECT name FROM schema_migrations WHERE version = 6"), "run_device_use");
}

TEST_F(StoreTest, UpsertsAreIdempotent) {
  Store store = Store::open(dir_ / "upsert.db");
  const auto device = store.upsert_device(cpu_device());
  EXPECT_EQ(store.upsert_device(cpu_device()), device);
  DeviceInfo renamed = cpu_device();
  renamed.name = "Renamed CPU";
  EXPECT_EQ(store.upsert_device(renamed), device);
  EXPECT_NE(store.upsert_device(cpu_device("cpu:other")), device);

  const auto kernel = store.upsert_kernel("rmsnorm", "cpu", "h1");
  EXPECT_EQ(store.upsert_kernel("rmsnorm", "cpu", "h1"), kernel);
  EXPECT_NE(store.upsert_kernel("rmsnorm", "cpu", "h2"), kernel);
  EXPECT_NE(store.upsert_kernel("rmsnorm", "cuda", "h1"), kernel);
  EXPECT_NE(store.upsert_kernel("softmax", "cpu", "h1"), kernel);

  const auto problem = store.upsert_problem(make_problem(256, 1024));
  EXPECT_EQ(store.upsert_problem(make_problem(256, 1024)), problem);
  EXPECT_NE(store.upsert_problem(make_problem(256, 1024, Precision::fp16)), problem);
  EXPECT_NE(store.upsert_problem(make_problem(256, 2048)), problem);
  EXPECT_NE(store.upsert_problem(make_problem(256, 1024, Precision::fp32, "softmax")), problem);

  RawDb raw(dir_ / "upsert.db", SQLITE_OPEN_READONLY);
  EXPECT_EQ(raw.scalar("SELECT count(*) FROM devices"), "2");
  EXPECT_EQ(raw.scalar("SELECT count(*) FROM kernels"), "4");
  EXPECT_EQ(raw.scalar("SELECT count(*) FROM problems"), "4");
}

TEST_F(StoreTest, RecordAndLoadRoundTrip) {
  Store store = Store::open(dir_ / "roundtrip.db");
  const Target target = make_target(store);

  const Config fast = make_config(8);
  const EvaluationResult ok = ok_result({1500.25, 1400.5, 1450.0, 1600.125, 1399.0});
  EvaluationResult wrong = failed_result(Outcome::wrong_result, "max relative error 0.3 > 1e-05");
  wrong.samples_ns = {900, 950};
  wrong.stats = summarize(wrong.samples_ns);
  wrong.error = 0.3;
  EvaluationResult nan_error = failed_result(Outcome::wrong_result, "output has NaN");
  nan_error.error = std::nan("");
  const EvaluationResult compile = failed_result(Outcome::compile_error, "error: 'foo' undeclared\nline 2");
  EvaluationResult no_stats = ok_result({10, 30, 20});
  no_stats.stats = {};  // the store fills in what the caller left out

  const std::vector<std::pair<Config, EvaluationResult>> cases = {
      {fast, ok}, {make_config(16), wrong}, {make_config(32), nan_error},
      {make_config(64), compile}, {make_config(1), no_stats}};
  std::vector<std::int64_t> ids;
  for (const auto& [config, result] : cases)
    ids.push_back(store.record_measurement(target.run, target.device, target.kernel,
                                           target.problem, config, result));

  const auto loaded = store.load_measurements(target.device, target.kernel, target.problem);
  ASSERT_EQ(loaded.size(), cases.size());
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const auto& [config, result] = cases[i];
    SCOPED_TRACE(config.key());
    const auto found = loaded.find(config.key());
    ASSERT_NE(found, loaded.end());
    const StoredMeasurement& stored = found->second;
    EXPECT_EQ(stored.id, ids[i]);
    EXPECT_EQ(stored.run_id, target.run);
    EXPECT_EQ(stored.config.key(), config.key());
    EXPECT_EQ(stored.config.to_json(), config.to_json());
    EXPECT_EQ(stored.result.outcome, result.outcome);
    EXPECT_EQ(stored.result.message, result.message);
    EXPECT_EQ(stored.result.samples_ns, result.samples_ns);
    const SampleStatistics expected = summarize(result.samples_ns);
    EXPECT_EQ(stored.result.stats.count, expected.count);
    EXPECT_DOUBLE_EQ(stored.result.stats.median_ns, expected.median_ns);
    EXPECT_DOUBLE_EQ(stored.result.stats.min_ns, expected.min_ns);
    EXPECT_DOUBLE_EQ(stored.result.stats.max_ns, expected.max_ns);
    EXPECT_DOUBLE_EQ(stored.result.stats.mean_ns, expected.mean_ns);
    EXPECT_DOUBLE_EQ(stored.result.stats.stddev_ns, expected.stddev_ns);
    EXPECT_DOUBLE_EQ(stored.result.stats.rel_stddev, expected.rel_stddev);
    if (std::isnan(result.error)) EXPECT_TRUE(std::isnan(stored.result.error));
    else EXPECT_DOUBLE_EQ(stored.result.error, result.error);
    EXPECT_DOUBLE_EQ(stored.result.compile_ms, result.compile_ms);
    EXPECT_EQ(stored.result.environment, result.environment);
    EXPECT_TRUE(std::regex_match(stored.measured_at,
                                 std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)")))
        << stored.measured_at;
  }
  // Other targets see nothing.
  EXPECT_TRUE(store.load_measurements(target.device, target.kernel, target.problem + 1000).empty());
  store.finish_run(target.run, "finished");
  RawDb raw(dir_ / "roundtrip.db", SQLITE_OPEN_READONLY);
  EXPECT_EQ(raw.scalar("SELECT status FROM runs"), "finished");
  EXPECT_NE(raw.scalar("SELECT finished_at FROM runs"), "NULL");
  EXPECT_EQ(raw.scalar("SELECT CAST(seed AS TEXT) FROM runs"), "-1");  // uint64 max, bit for bit
  EXPECT_EQ(raw.scalar("SELECT argv FROM runs"), R"(["ktune","tune","rmsnorm","--db","x.db"])");
}

TEST_F(StoreTest, RecordingTheSameKeyTwiceKeepsOneRow) {
  const fs::path path = dir_ / "twice.db";
  Store store = Store::open(path);
  const Target target = make_target(store);
  const auto first = store.record_measurement(target.run, target.device, target.kernel,
                                              target.problem, make_config(4), ok_result({500, 510}));
  // Same values in another order: the same config.
  const Config original = make_config(4);
  Config reordered;
  reordered.values.assign(original.values.rbegin(), original.values.rend());
  const auto second = store.record_measurement(target.run, target.device, target.kernel,
                                               target.problem, reordered, ok_result({1, 2}));
  EXPECT_EQ(first, second);
  const auto loaded = store.load_measurements(target.device, target.kernel, target.problem);
  ASSERT_EQ(loaded.size(), 1u);
  EXPECT_EQ(loaded.begin()->second.result.samples_ns, (std::vector<double>{500, 510}));  // kept
  RawDb raw(path, SQLITE_OPEN_READONLY);
  EXPECT_EQ(raw.scalar("SELECT count(*) FROM measurements"), "1");
}

TEST_F(StoreTest, BestMeasurementsPicksLowestOkMedian) {
  Store store = Store::open(dir_ / "best.db");
  const Problem wide = make_problem(64, 4096, Precision::fp16);
  const Target a = make_target(store, "rmsnorm", wide);
  auto record = [&](const Target& t, std::int64_t threads, const EvaluationResult& result) {
    return store.record_measurement(t.run, t.device, t.kernel, t.problem, make_config(threads), result);
  };
  record(a, 1, ok_result({100, 100, 100}));
  const auto winner = record(a, 2, ok_result({50, 52, 48}));
  record(a, 3, ok_result({80, 80}));
  EvaluationResult wrong = failed_result(Outcome::wrong_result, "mismatch");
  wrong.samples_ns = {10, 10, 10};  // fastest, but wrong
  wrong.stats = summarize(wrong.samples_ns);
  record(a, 4, wrong);
  record(a, 5, failed_result(Outcome::crashed, "signal 11"));
  record(a, 6, failed_result(Outcome::timeout, "deadline 10 s"));

  // A second problem of the same family; a problem with only failures; another family.
  const Target b = make_target(store, "rmsnorm", make_problem(8, 128));
  const auto b_best = record(b, 7, ok_result({7000}));
  const Target only_failed = make_target(store, "rmsnorm", make_problem(1, 1));
  record(only_failed, 1, wrong);
  const Target other = make_target(store, "softmax", make_problem(2, 2, Precision::fp32, "softmax"));
  const auto other_best = record(other, 1, ok_result({5}));

  const auto best = store.best_measurements("rmsnorm");
  ASSERT_EQ(best.size(), 2u);
  // Ordered by problem dims (numerically): rows=8 before rows=64.
  EXPECT_EQ(best[0].measurement_id, b_best);
  const BestMeasurement& top = best[1];
  EXPECT_EQ(top.measurement_id, winner);
  EXPECT_DOUBLE_EQ(top.stats.median_ns, 50);
  EXPECT_EQ(top.stats.count, 3u);
  EXPECT_EQ(top.config.key(), make_config(2).key());
  EXPECT_DOUBLE_EQ(top.error, 1e-7);
  EXPECT_EQ(top.family, "rmsnorm");
  EXPECT_EQ(top.backend, "cpu");
  EXPECT_EQ(top.source_hash, "hash-rmsnorm");
  EXPECT_EQ(top.problem.family, "rmsnorm");
  EXPECT_EQ(top.problem.dims, wide.dims);  // rows before cols, as given
  EXPECT_EQ(top.problem.precision, Precision::fp16);
  EXPECT_EQ(top.problem.key(), wide.key());
  const DeviceInfo device = cpu_device();
  EXPECT_EQ(top.device.fingerprint, device.fingerprint);
  EXPECT_EQ(top.device.name, device.name);
  EXPECT_EQ(top.device.vendor, device.vendor);
  EXPECT_EQ(top.device.architecture, device.architecture);
  EXPECT_EQ(top.device.backend, device.backend);
  EXPECT_EQ(top.device.limits, device.limits);
  EXPECT_EQ(top.device.properties, device.properties);
  EXPECT_EQ(top.ktune_version, "0.1.0");
  EXPECT_EQ(top.git_commit, "abc123def456");
  EXPECT_FALSE(top.measured_at.empty());

  const auto all = store.best_measurements();
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[2].measurement_id, other_best);
  EXPECT_TRUE(store.best_measurements("gemm").empty());
  EXPECT_EQ(store.measured_families(), (std::vector<std::string>{"rmsnorm", "softmax"}));
}

// ktune tune's database prior: this device's other problems first, the closest problem first
// among them (whatever was measured last), then other devices; the tuned problem itself is not
// prior.
TEST_F(StoreTest, TunePriorTakesThisDevicesClosestProblemFirst) {
  Store store = Store::open(dir_ / "prior.db");
  const DeviceInfo here = cpu_device();
  const std::int64_t device = store.upsert_device(here);
  const std::int64_t elsewhere = store.upsert_device(cpu_device("cpu:other-machine"));
  const std::int64_t kernel = store.upsert_kernel("rmsnorm", "cpu", "hash-rmsnorm");
  // Measured in this order: the close problem first, so recency alone would put it last.
  const struct { std::int64_t device; Problem problem; std::int64_t threads; } measured[] = {
      {device, make_problem(256, 2048), 1},     // 1 doubling away from 256 x 1024
      {elsewhere, make_problem(256, 1024), 2},  // the tuned problem, on another device
      {device, make_problem(16, 64), 3},        // 8 doublings away
      {device, make_problem(256, 1024), 4},     // the tuned problem itself
  };
  for (const auto& m : measured) {
    const std::int64_t problem = store.upsert_problem(m.problem);
    const std::int64_t run = store.begin_run(run_info(), m.device, kernel, problem);
    store.record_measurement(run, m.device, kernel, problem, make_config(m.threads), ok_result({100.0}));
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // distinct times (milliseconds)
  }
  const std::vector<Config> prior = tune_prior(store, "rmsnorm", "cpu", here, make_problem(256, 1024));
  ASSERT_EQ(prior.size(), 3u);
  EXPECT_EQ(prior[0].get_int("threads"), 1);
  EXPECT_EQ(prior[1].get_int("threads"), 3);
  EXPECT_EQ(prior[2].get_int("threads"), 2);
}

// Ids differ between databases; merging matches devices, kernels, problems and runs by what they
// are, keeps the first result of a config measured in both, and adds nothing the second time.
TEST_F(StoreTest, MergeMatchesRowsByNaturalKeysAndKeepsTheFirstResult) {
  const fs::path into = dir_ / "into.db", source = dir_ / "source.db";
  {
    Store store = Store::open(into);
    const Target t = make_target(store);
    for (int i = 0; i < 5; ++i)
      store.record_measurement(t.run, t.device, t.kernel, t.problem, make_config(i), ok_result({100.0 + i}));
  }
  {
    Store store = Store::open(source);
    // Another device and problem first, so the shared ones get other ids here.
    const std::int64_t other_device = store.upsert_device(cpu_device("cpu:other-machine"));
    const std::int64_t kernel = store.upsert_kernel("rmsnorm", "cpu", "hash-rmsnorm");
    const std::int64_t other_problem = store.upsert_problem(make_problem(8, 8));
    const std::int64_t other_run = store.begin_run(run_info(), other_device, kernel, other_problem);
    store.record_measurement(other_run, other_device, kernel, other_problem, make_config(1), ok_result({7.0}));
    const Target t = make_target(store);
    for (int i = 3; i < 8; ++i)
      store.record_measurement(t.run, t.device, t.kernel, t.problem, make_config(i), ok_result({10.0 + i}));
    store.finish_run(t.run, "finished", DeviceUse{.kernel_share = 0.75, .between_share = 0.125, .configs_per_minute = 6});
  }
  const std::string source_bytes = read_bytes(source);

  Store store = Store::open(into);
  const MergeCounts counts = store.merge_from(source);
  EXPECT_EQ(counts.devices, 1);
  EXPECT_EQ(counts.runs, 2);
  EXPECT_EQ(counts.measurements, 4);  // configs 5, 6, 7 and the other machine's
  EXPECT_EQ(counts.measurements_already_present, 2);  // configs 3 and 4
  const Target t = make_target(store);
  const auto shared = store.load_measurements(t.device, t.kernel, t.problem);
  ASSERT_EQ(shared.size(), 8u);
  EXPECT_DOUBLE_EQ(shared.at(make_config(3).key()).result.stats.median_ns, 103.0);  // the first result
  EXPECT_DOUBLE_EQ(shared.at(make_config(7).key()).result.stats.median_ns, 17.0);
  const auto best = store.best_measurements("rmsnorm");
  ASSERT_EQ(best.size(), 2u);
  EXPECT_EQ(best[0].device.fingerprint, "cpu:other-machine");
  EXPECT_DOUBLE_EQ(best[0].stats.median_ns, 7.0);
  {  // a merged run keeps its device use
    RawDb raw(into, SQLITE_OPEN_READONLY);
    EXPECT_EQ(raw.column("SELECT kernel_share || ' ' || between_share || ' ' || configs_per_minute FROM runs "
                         "WHERE kernel_share IS NOT NULL"),
              std::vector<std::string>{"0.75 0.125 6.0"});
  }

  const MergeCounts again = store.merge_from(source);
  EXPECT_EQ(again.devices + again.runs + again.measurements, 0);
  EXPECT_EQ(again.measurements_already_present, 6);
  EXPECT_TRUE(read_bytes(source) == source_bytes) << "the source was written";
  EXPECT_THROW(store.merge_from(dir_ / "missing.db"), InputError);
  EXPECT_THROW(store.merge_from(into), InputError);
}

TEST_F(StoreTest, MovedStoreKeepsWorking) {
  Store first = Store::open(dir_ / "a.db");
  Store moved = std::move(first);
  EXPECT_EQ(moved.schema_version(), Store::latest_schema_version());
  Store other = Store::open(dir_ / "b.db");
  other = std::move(moved);
  EXPECT_EQ(other.path(), dir_ / "a.db");
  EXPECT_GT(other.upsert_kernel("f", "cpu", "h"), 0);
}

TEST_F(StoreTest, TwoProcessesWriteOneNewDatabaseAtOnce) {
  const fs::path path = dir_ / "shared.db";  // does not exist yet: creation races too
  int go[2];
  ASSERT_EQ(pipe(go), 0);
  std::vector<pid_t> children;
  for (int child = 0; child < 2; ++child) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      close(go[1]);
      char byte;
      while (read(go[0], &byte, 1) > 0) {
      }  // wait until the parent closes the pipe: both start together
      int code = 0;
      try {
        record_many(path, child * 1000, 200);
      } catch (const std::exception& error) {
        std::fprintf(stderr, "child %d: %s\n", child, error.what());
        code = 1;
      }
      _exit(code);
    }
    children.push_back(pid);
  }
  close(go[0]);
  close(go[1]);
  for (const pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child failed, status " << status;
  }
  Store store = Store::open(path);
  const Target target = make_target(store);
  EXPECT_EQ(store.load_measurements(target.device, target.kernel, target.problem).size(), 400u);
  RawDb raw(path, SQLITE_OPEN_READONLY);
  EXPECT_EQ(raw.scalar("PRAGMA integrity_check"), "ok");
  EXPECT_EQ(raw.scalar("SELECT count(*) FROM schema_migrations"),
            std::to_string(Store::latest_schema_version()));
  EXPECT_EQ(raw.scalar("SELECT count(*) FROM devices"), "1");
  EXPECT_EQ(raw.scalar("SELECT count(*) FROM runs WHERE status = 'finished'"), "2");
}

TEST_F(StoreTest, TwoThreadsWriteOneDatabaseAtOnce) {
  const fs::path path = dir_ / "threads.db";
  std::vector<std::string> errors(2);
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t)
    threads.emplace_back([&, t] {
      try {
        record_many(path, t * 1000, 200);
      } catch (const std::exception& error) {
        errors[t] = error.what();
      }
    });
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(errors, (std::vector<std::string>{"", ""}));
  Store store = Store::open(path);
  const Target target = make_target(store);
  EXPECT_EQ(store.load_measurements(target.device, target.kernel, target.problem).size(), 400u);
  RawDb raw(path, SQLITE_OPEN_READONLY);
  EXPECT_EQ(raw.scalar("PRAGMA integrity_check"), "ok");
}

TEST_F(StoreTest, KilledWriterLosesNothingCommitted) {
  const fs::path path = dir_ / "killed.db";
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    try {
      auto* store = new Store(Store::open(path));  // never closed: like kill -9
      const Target target = make_target(*store);
      for (int i = 0; i < 10; ++i)
        store->record_measurement(target.run, target.device, target.kernel, target.problem,
                                  make_config(i), ok_result({1.0 * i + 1}));
    } catch (...) {
      _exit(1);
    }
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  ASSERT_TRUE(fs::exists(path.string() + "-wal"));  // the log was not checkpointed
  Store store = Store::open(path);
  const Target target = make_target(store);
  EXPECT_EQ(store.load_measurements(target.device, target.kernel, target.problem).size(), 10u);
}

TEST_F(StoreTest, RefusesATextFile) {
  const fs::path path = dir_ / "notes.db";
  write_bytes(path, "these are my notes, not a database\n");
  expect_refused(path, "not a SQLite database");
}

TEST_F(StoreTest, RefusesAShortFile) {
  const fs::path path = dir_ / "short.db";
  write_bytes(path, std::string("SQLite format 3\0", 16) + "abc");
  expect_refused(path, "truncated");
}

TEST_F(StoreTest, RefusesATruncatedDatabase) {
  const fs::path real = make_real_db("real.db");
  const std::string bytes = read_bytes(real);
  ASSERT_GT(bytes.size(), 8192u);
  const fs::path path = dir_ / "truncated.db";
  write_bytes(path, bytes.substr(0, bytes.size() / 2));
  expect_refused(path, "truncated");
}

TEST_F(StoreTest, RefusesACorruptDatabase) {
  // Full length, valid header, but the pages after the first are garbage.
  const fs::path real = make_real_db("real.db");
  std::string bytes = read_bytes(real);
  for (std::size_t i = 4096; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 7919 % 251);
  const fs::path path = dir_ / "corrupt.db";
  write_bytes(path, bytes);
  expect_refused(path, "corrupt");
}

TEST_F(StoreTest, RefusesAForeignSqliteDatabase) {
  const fs::path path = dir_ / "foreign.db";
  {
    RawDb raw(path);
    raw.exec("CREATE TABLE foo (x INTEGER); INSERT INTO foo VALUES (1)");
  }
  expect_refused(path, "not a ktune database");
  RawDb raw(path, SQLITE_OPEN_READONLY);
  EXPECT_EQ(raw.scalar("PRAGMA journal_mode"), "delete");  // not switched to WAL
}

TEST_F(StoreTest, RefusesADatabaseOfAnotherApplication) {
  const fs::path path = dir_ / "other-app.db";
  {
    RawDb raw(path);
    raw.exec("PRAGMA application_id = 1234");
  }
  expect_refused(path, "not a ktune database");
}

TEST_F(StoreTest, RefusesANewerSchema) {
  const fs::path path = make_real_db("newer.db");
  {
    RawDb raw(path);
    raw.exec("PRAGMA user_version = " + std::to_string(Store::latest_schema_version() + 1));
  }
  expect_refused(path, "newer");
  EXPECT_FALSE(fs::exists(path.string() + "-wal"));  // refused before SQLite opened it
  {
    RawDb raw(path, SQLITE_OPEN_READONLY);
    EXPECT_EQ(raw.scalar("PRAGMA integrity_check"), "ok");
  }
  // Also when only the migrations table says so.
  {
    RawDb raw(path);
    raw.exec("PRAGMA user_version = " + std::to_string(Store::latest_schema_version()));
    raw.exec("INSERT INTO schema_migrations VALUES (" +
             std::to_string(Store::latest_schema_version() + 1) + ", 'future', '2099-01-01T00:00:00.000Z')");
  }
  expect_refused(path, "newer");
}

TEST_F(StoreTest, RefusesADirectoryAndAMissingParent) {
  try {
    Store::open(dir_);
    ADD_FAILURE() << "accepted a directory";
  } catch (const InputError& error) {
    EXPECT_NE(std::string(error.what()).find("directory"), std::string::npos) << error.what();
  }
  const fs::path missing = dir_ / "no" / "such" / "dir" / "k.db";
  try {
    Store::open(missing);
    ADD_FAILURE() << "accepted a missing directory";
  } catch (const InputError& error) {
    EXPECT_NE(std::string(error.what()).find(missing.string()), std::string::npos) << error.what();
  }
  EXPECT_FALSE(fs::exists(dir_ / "no"));
}

}  // namespace
