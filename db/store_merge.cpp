// Store::merge_from: results gathered apart (offline clusters, separate machines) folded into
// one database. The source is never written: a consistent snapshot of it (SQLite's backup API,
// which also takes what its WAL holds) is migrated to this binary's schema in a temporary file
// and attached. Rows are matched by their natural keys, never by id: devices by fingerprint,
// kernels by (family, backend, source hash), problems by (family, key), runs and bench runs by
// when, where and how they ran. A measurement this database already has for the same device,
// kernel, problem and config is kept ("measured once"), so merging twice adds nothing.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <functional>
#include <vector>

#include "db/process_owner.hpp"
#include "db/read_only_connection.hpp"
#include "db/store_impl.hpp"

namespace ktune {
namespace {

namespace fs = std::filesystem;
using store_detail::exec;
using store_detail::quoted;

// The snapshot's home: a directory of its own, made by mkdtemp (created exclusively, mode 700,
// so no other user can place a file or a symlink in it, nor read what it holds) beside the
// database merged into, else in $TMPDIR, removed with everything in it on every way out. A fixed
// or guessable name in a shared directory let another local user redirect the copy onto one of
// the victim's databases, or read a source it could not.
struct TemporaryDatabase {
  fs::path dir;
  fs::path path;
  explicit TemporaryDatabase(const fs::path& beside) {
    std::vector<fs::path> candidates{beside.parent_path().empty() ? fs::path(".") : beside.parent_path()};
    std::error_code error;
    candidates.push_back(fs::temp_directory_path(error));
    std::string failures;
    for (const fs::path& parent : candidates) {
      if (parent.empty()) continue;
      remove_abandoned(parent);
      std::string pattern = (parent / ".ktune-merge-XXXXXX").string();
      if (::mkdtemp(pattern.data())) {
        dir = pattern;
        path = dir / "snapshot.db";
        // Its owner, so that a later merge can remove it should this process be killed.
        std::ofstream(dir / "owner") << this_process_owner() << "\n";
        return;
      }
      failures += " " + parent.string() + " (" + std::strerror(errno) + ")";
    }
    throw InputError("db merge: cannot create a private directory for the snapshot in:" + failures);
  }
  // The snapshot folders of merges killed before they could clean up (kill -9): those of this
  // user whose owner process has ended.
  static void remove_abandoned(const fs::path& parent) {
    std::error_code error;
    for (fs::directory_iterator it(parent, error), end; !error && it != end; it.increment(error)) {
      const std::string name = it->path().filename().string();
      if (name.rfind(".ktune-merge-", 0) != 0) continue;
      struct stat info {};
      if (::lstat(it->path().c_str(), &info) != 0 || !S_ISDIR(info.st_mode) || info.st_uid != ::getuid()) continue;
      std::ifstream in(it->path() / "owner");
      std::string owner;
      if (!std::getline(in, owner) || process_owner_alive(owner)) continue;
      std::error_code ignored;
      fs::remove_all(it->path(), ignored);
    }
  }
  TemporaryDatabase(const TemporaryDatabase&) = delete;
  TemporaryDatabase& operator=(const TemporaryDatabase&) = delete;
  ~TemporaryDatabase() {
    std::error_code ignored;
    fs::remove_all(dir, ignored);
  }
};

// Copies `source` into `copy` with SQLite's online backup. The source is opened so that nothing
// is written to it or beside it: it may be a shared file the user may only read.
void snapshot(const fs::path& source, const fs::path& copy, const std::function<bool()>& should_stop) {
  sqlite3* from = store_detail::open_read_only_connection(source);
  sqlite3* to = nullptr;
  int rc = sqlite3_open_v2(copy.c_str(), &to, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOFOLLOW, nullptr);
  if (rc == SQLITE_OK) {
    sqlite3_backup* backup = sqlite3_backup_init(to, "main", from, "main");
    if (!backup) {
      rc = sqlite3_errcode(to);
    } else {
      // In steps, so that a stop request is seen within a fraction of a second.
      do rc = sqlite3_backup_step(backup, 1024);
      while ((rc == SQLITE_OK || rc == SQLITE_BUSY || rc == SQLITE_LOCKED) && !(should_stop && should_stop()));
      sqlite3_backup_finish(backup);
      rc = rc == SQLITE_DONE ? SQLITE_OK : rc == SQLITE_OK ? SQLITE_INTERRUPT : rc;
    }
  }
  const std::string why = rc == SQLITE_OK ? "" : sqlite3_errstr(rc);
  sqlite3_close_v2(from);
  sqlite3_close_v2(to);
  if (rc != SQLITE_OK) throw InputError("database " + quoted(source) + ": cannot be read (" + why + ")");
}

// Natural-key joins from a source row's ids to this database's ids.
constexpr const char* kMapIds = R"sql(
CREATE TEMP TABLE merge_ids (kind TEXT NOT NULL, source_id INTEGER NOT NULL, id INTEGER NOT NULL,
                             PRIMARY KEY (kind, source_id));
INSERT INTO merge_ids SELECT 'device', s.id, d.id FROM src.devices s JOIN main.devices d USING (fingerprint);
INSERT INTO merge_ids SELECT 'kernel', s.id, k.id FROM src.kernels s
  JOIN main.kernels k ON k.family = s.family AND k.backend = s.backend AND k.source_hash = s.source_hash;
INSERT INTO merge_ids SELECT 'problem', s.id, p.id FROM src.problems s
  JOIN main.problems p ON p.family = s.family AND p.key = s.key;
)sql";

// A source run as this database's ids: the same run when it was merged before.
constexpr const char* kSourceRuns = R"sql(
  SELECT r.*, d.id AS to_device, k.id AS to_kernel, p.id AS to_problem FROM src.runs r
  JOIN merge_ids d ON d.kind = 'device' AND d.source_id = r.device_id
  JOIN merge_ids k ON k.kind = 'kernel' AND k.source_id = r.kernel_id
  JOIN merge_ids p ON p.kind = 'problem' AND p.source_id = r.problem_id
)sql";
constexpr const char* kSameRun = R"sql(
  x.started_at = r.started_at AND x.hostname = r.hostname AND x.command = r.command AND x.argv = r.argv
  AND x.device_id = r.to_device AND x.kernel_id = r.to_kernel AND x.problem_id = r.to_problem
)sql";
constexpr const char* kSourceBenchRuns = R"sql(
  SELECT b.*, d.id AS to_device FROM src.bench_runs b JOIN merge_ids d ON d.kind = 'device' AND d.source_id = b.device_id
)sql";
constexpr const char* kSameBenchRun = R"sql(
  x.started_at = b.started_at AND x.hostname = b.hostname AND x.argv = b.argv AND x.suite = b.suite
  AND x.device_id = b.to_device
)sql";

}  // namespace

MergeCounts Store::merge_from(const fs::path& source, const std::function<bool()>& should_stop) {
  Impl& self = Impl::of(impl_);
  std::error_code error;
  if (!fs::is_regular_file(source, error)) throw InputError("database " + quoted(source) + ": no such file");
  if (fs::equivalent(source, self.path, error)) throw InputError("database " + quoted(source) + " is the one merged into");

  TemporaryDatabase copy(self.path);
  snapshot(source, copy.path, should_stop);
  try {
    Store::open(copy.path);  // a ktune database? then migrated to this schema; closed again here
  } catch (const InputError& e) {
    std::string why = e.what();
    const std::string copy_name = quoted(copy.path);
    // Every mention, advice included: the snapshot is gone by the time the user reads it.
    for (auto at = why.find(copy_name); at != std::string::npos; at = why.find(copy_name, at + 1))
      why.replace(at, copy_name.size(), quoted(source));
    throw InputError(why);
  }

  auto count = [&](const std::string& sql) {
    store_detail::Statement statement(self.db, sql, self.path);
    return statement.step() ? statement.int64(0) : 0;
  };
  auto run = [&](const std::string& sql) {
    exec(self.db, sql, self.path);
    return static_cast<std::int64_t>(sqlite3_changes(self.db));
  };

  MergeCounts counts;
  exec(self.db, "ATTACH DATABASE " + quoted(copy.path) + " AS src", self.path);
  // A stop request interrupts the statement running (every few thousand virtual-machine steps);
  // the transaction then rolls back.
  struct ProgressHook {
    sqlite3* db;
    ProgressHook(sqlite3* db, const std::function<bool()>* stop) : db(db) {
      if (*stop)
        sqlite3_progress_handler(db, 4096, [](void* f) { return (*static_cast<const std::function<bool()>*>(f))() ? 1 : 0; },
                                 const_cast<std::function<bool()>*>(stop));
    }
    ~ProgressHook() { sqlite3_progress_handler(db, 0, nullptr, nullptr); }
  } progress_hook(self.db, &should_stop);
  try {
    auto transaction = self.transaction();
    const std::int64_t devices_before = count("SELECT count(*) FROM main.devices");
    run("INSERT INTO main.devices (fingerprint, backend, name, vendor, architecture, limits, properties, first_seen, last_seen) "
        "SELECT fingerprint, backend, name, vendor, architecture, limits, properties, first_seen, last_seen "
        "FROM src.devices WHERE true ON CONFLICT (fingerprint) DO UPDATE SET "
        "first_seen = min(devices.first_seen, excluded.first_seen), last_seen = max(devices.last_seen, excluded.last_seen)");
    counts.devices = count("SELECT count(*) FROM main.devices") - devices_before;
    run("INSERT OR IGNORE INTO main.kernels (family, backend, source_hash, first_seen) "
        "SELECT family, backend, source_hash, first_seen FROM src.kernels");
    run("INSERT OR IGNORE INTO main.problems (family, key, dims, precision) SELECT family, key, dims, precision FROM src.problems");
    exec(self.db, kMapIds, self.path);

    counts.runs = run(std::string("INSERT INTO main.runs (started_at, finished_at, status, command, ktune_version, git_commit, "
                                  "argv, hostname, strategy, seed, device_id, kernel_id, problem_id, kernel_share, "
                                  "between_share, configs_per_minute) "
                                  "SELECT started_at, finished_at, status, command, ktune_version, git_commit, argv, hostname, "
                                  "strategy, seed, to_device, to_kernel, to_problem, kernel_share, between_share, "
                                  "configs_per_minute FROM (") +
                      kSourceRuns + ") r WHERE NOT EXISTS (SELECT 1 FROM main.runs x WHERE " + kSameRun + ")");
    run(std::string("INSERT INTO merge_ids SELECT 'run', r.id, (SELECT min(x.id) FROM main.runs x WHERE ") + kSameRun +
        ") FROM (" + kSourceRuns + ") r");
    const std::int64_t source_measurements = count("SELECT count(*) FROM src.measurements");
    counts.measurements = run(
        "INSERT OR IGNORE INTO main.measurements (run_id, device_id, kernel_id, problem_id, config_key, config, outcome, "
        "message, median_ns, min_ns, max_ns, mean_ns, stddev_ns, rel_stddev, sample_count, samples, error, compile_ms, "
        "environment, measured_at) "
        "SELECT r.id, d.id, k.id, p.id, m.config_key, m.config, m.outcome, m.message, m.median_ns, m.min_ns, m.max_ns, "
        "m.mean_ns, m.stddev_ns, m.rel_stddev, m.sample_count, m.samples, m.error, m.compile_ms, m.environment, "
        "m.measured_at FROM src.measurements m "
        "JOIN merge_ids r ON r.kind = 'run' AND r.source_id = m.run_id "
        "JOIN merge_ids d ON d.kind = 'device' AND d.source_id = m.device_id "
        "JOIN merge_ids k ON k.kind = 'kernel' AND k.source_id = m.kernel_id "
        "JOIN merge_ids p ON p.kind = 'problem' AND p.source_id = m.problem_id");
    counts.measurements_already_present = source_measurements - counts.measurements;

    counts.bench_runs = run(std::string("INSERT INTO main.bench_runs (started_at, finished_at, status, ktune_version, "
                                        "git_commit, argv, hostname, device_id, suite, repetitions, context) "
                                        "SELECT started_at, finished_at, status, ktune_version, git_commit, argv, hostname, "
                                        "to_device, suite, repetitions, context FROM (") +
                            kSourceBenchRuns + ") b WHERE NOT EXISTS (SELECT 1 FROM main.bench_runs x WHERE " +
                            kSameBenchRun + ")");
    run(std::string("INSERT INTO merge_ids SELECT 'bench_run', b.id, (SELECT min(x.id) FROM main.bench_runs x WHERE ") +
        kSameBenchRun + ") FROM (" + kSourceBenchRuns + ") b");
    counts.bench_results = run(
        "INSERT OR IGNORE INTO main.bench_results (bench_run_id, name, role, kernel_id, problem_id, config, config_source, "
        "baseline_name, outcome, message, repetitions_ns, median_ns, min_ns, max_ns, bytes, flops, error, measured_at) "
        "SELECT b.id, s.name, s.role, k.id, p.id, s.config, s.config_source, s.baseline_name, s.outcome, s.message, "
        "s.repetitions_ns, s.median_ns, s.min_ns, s.max_ns, s.bytes, s.flops, s.error, s.measured_at FROM src.bench_results s "
        "JOIN merge_ids b ON b.kind = 'bench_run' AND b.source_id = s.bench_run_id "
        "JOIN merge_ids k ON k.kind = 'kernel' AND k.source_id = s.kernel_id "
        "JOIN merge_ids p ON p.kind = 'problem' AND p.source_id = s.problem_id");
    exec(self.db, "DROP TABLE temp.merge_ids", self.path);
    transaction.commit();
  } catch (...) {
    sqlite3_exec(self.db, "DROP TABLE IF EXISTS temp.merge_ids", nullptr, nullptr, nullptr);
    sqlite3_exec(self.db, "DETACH DATABASE src", nullptr, nullptr, nullptr);
    throw;
  }
  exec(self.db, "DETACH DATABASE src", self.path);
  return counts;
}

}  // namespace ktune
