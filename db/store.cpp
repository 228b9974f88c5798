// The results database. See store.hpp for the contract and db/migrations/*.sql for the schema.
//
// Opening an existing file happens in two phases so that a file ktune must refuse is never
// written to:
//   1. The file itself is inspected without SQLite: a missing or empty file is a new database;
//      anything else must start with the 100-byte SQLite header and be at least as long as the
//      header says (a truncated copy is refused here).
//   2. A read-only connection (SQLITE_OPEN_READONLY) runs PRAGMA quick_check and classifies the
//      file: empty SQLite database, ktune database (application_id == kApplicationId) of a known
//      schema version, or anything else (refused).
// Only then is the file opened read-write; the classification is repeated on that connection
// before the first write (journal_mode=WAL) and again inside each migration's BEGIN IMMEDIATE
// transaction, so a file that changed in between is still refused rather than modified.
#include "db/store.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <fstream>
#include <limits>
#include <stdexcept>
#include <string_view>
#include <thread>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "db/store_impl.hpp"
#include "ktune/migrations.hpp"
#include "tuner/core/errors.hpp"

namespace ktune {
namespace fs = std::filesystem;
using namespace store_detail;

namespace {

// PRAGMA application_id of every ktune database: "ktun" in ASCII. Together with the
// schema_migrations table it marks a file as a ktune database.
constexpr std::int32_t kApplicationId = 0x6B74756E;
constexpr char kSqliteMagic[16] = {'S', 'Q', 'L', 'i', 't', 'e', ' ', 'f',
                                   'o', 'r', 'm', 'a', 't', ' ', '3', '\0'};


// What a SQLite file holds, as far as ktune cares.
struct Contents {
  std::int64_t application_id = 0;
  std::int64_t user_version = 0;
  std::vector<std::string> tables;  // user tables, sorted
  std::int64_t objects = 0;         // everything in sqlite_schema
  bool has_migrations_table = false;
  std::int64_t max_migration = 0;
};

Contents read_contents(sqlite3* db, const fs::path& path) {
  // One read transaction (unless already inside one), so the header and the schema come from
  // the same snapshot even while another process is creating the database.
  struct ReadTransaction {
    sqlite3* db;
    bool active = false;
    ~ReadTransaction() {
      if (active) sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
    }
  } read{db};
  if (sqlite3_get_autocommit(db)) {
    exec(db, "BEGIN", path);
    read.active = true;
  }
  Contents contents;
  contents.application_id = pragma_int(db, "application_id", path);
  contents.user_version = pragma_int(db, "user_version", path);
  Statement objects(db,
                    "SELECT type, name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' "
                    "ORDER BY name",
                    path);
  while (objects.step()) {
    ++contents.objects;
    if (objects.text(0) == "table") {
      contents.tables.push_back(objects.text(1));
      if (contents.tables.back() == "schema_migrations") contents.has_migrations_table = true;
    }
  }
  if (contents.has_migrations_table) {
    Statement max(db, "SELECT max(version) FROM schema_migrations", path);
    if (max.step() && !max.is_null(0)) contents.max_migration = max.int64(0);
  }
  return contents;
}

[[noreturn]] void refuse_newer(const fs::path& path, std::int64_t version) {
  throw InputError("database " + quoted(path) + " was written by a newer ktune (schema version " +
                   std::to_string(version) + "; this ktune knows versions up to " +
                   std::to_string(migrations::kLatestVersion) +
                   "). It was left unchanged; open it with a newer ktune, or use another "
                   "database file.");
}

// Throws InputError unless the file is an empty SQLite database or a ktune database this binary
// can use. Returns true for a ktune database, false for an empty one.
bool validate(const Contents& contents, const fs::path& path) {
  const int latest = migrations::kLatestVersion;
  if (contents.application_id == kApplicationId) {
    const std::int64_t version = std::max(contents.user_version, contents.max_migration);
    if (version > latest) refuse_newer(path, version);
    if (contents.user_version > 0 && !contents.has_migrations_table)
      throw InputError("database " + quoted(path) +
                       " is marked as a ktune database but has no schema_migrations table; it was "
                       "damaged or edited by hand. It was left unchanged; use another database file.");
    return true;
  }
  if (contents.application_id == 0 && contents.user_version == 0 && contents.objects == 0)
    return false;
  std::string what;
  if (!contents.tables.empty()) {
    std::vector<std::string> shown(contents.tables.begin(),
                                   contents.tables.begin() +
                                       static_cast<std::ptrdiff_t>(std::min<std::size_t>(contents.tables.size(), 8)));
    what = "it has the tables " + join_names(shown) + (contents.tables.size() > 8 ? ", ..." : "") +
           " and ";
  } else {
    what = "it ";
  }
  what += contents.application_id == 0
              ? std::string("lacks the ktune marker")
              : "belongs to another application (application_id " +
                    std::to_string(contents.application_id) + ")";
  throw InputError("database " + quoted(path) + " is a SQLite database but not a ktune database (" +
                   what + "). ktune will not modify it; pass the path of a ktune database or of a "
                   "new file.");
}

std::uint32_t big_endian(const unsigned char* bytes, int count) {
  std::uint32_t value = 0;
  for (int i = 0; i < count; ++i) value = (value << 8) | bytes[i];
  return value;
}

bool nonempty_file(const fs::path& path) {
  std::error_code error;
  return fs::is_regular_file(path, error) && fs::file_size(path, error) > 0 && !error;
}

// Phase 1: looks at the file without SQLite. Returns false for a new database (no file or an
// empty one), true for a file that starts like a SQLite database; throws InputError otherwise.
bool inspect_file(const fs::path& path) {
  std::error_code error;
  const fs::file_status status = fs::status(path, error);
  if (status.type() == fs::file_type::not_found) {
    const fs::path parent = path.parent_path();
    if (!parent.empty() && !fs::is_directory(parent, error))
      throw InputError("cannot create database " + quoted(path) + ": the directory " +
                       quoted(parent) + " does not exist; create it first or choose another path.");
    return false;
  }
  if (error)
    throw InputError("cannot access database " + quoted(path) + ": " + error.message() + ".");
  if (status.type() == fs::file_type::directory)
    throw InputError("database path " + quoted(path) +
                     " is a directory; pass the path of a database file (e.g. " +
                     (path / "ktune.db").string() + ").");
  if (status.type() != fs::file_type::regular)
    throw InputError("database path " + quoted(path) + " is not a regular file.");
  const std::uintmax_t size = fs::file_size(path, error);
  if (error)
    throw InputError("cannot read database " + quoted(path) + ": " + error.message() + ".");
  if (size == 0) return false;

  std::array<unsigned char, 100> header{};
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw InputError("cannot read database " + quoted(path) + ": " + std::strerror(errno) +
                     "; check its permissions.");
  in.read(reinterpret_cast<char*>(header.data()), header.size());
  const auto got = static_cast<std::size_t>(in.gcount());
  if (got < sizeof kSqliteMagic || std::memcmp(header.data(), kSqliteMagic, sizeof kSqliteMagic) != 0)
    throw InputError("database " + quoted(path) +
                     " is not a SQLite database (it does not start with the SQLite header); it was "
                     "left unchanged. Pass the path of a ktune database, or of a new file to create "
                     "one.");
  if (got < header.size())
    throw InputError("database " + quoted(path) + " is truncated (" + std::to_string(size) +
                     " bytes, shorter than the SQLite header); it was left unchanged. Restore it "
                     "from a backup or use a new database file.");

  // The header's page count is authoritative when its change counter matches version-valid-for.
  // Skip the check while a write-ahead log or rollback journal exists: then the main file may
  // legitimately lag behind.
  std::uint32_t page_size = big_endian(&header[16], 2);
  if (page_size == 1) page_size = 65536;
  const bool page_size_ok = page_size >= 512 && page_size <= 65536 && (page_size & (page_size - 1)) == 0;
  const std::uint32_t page_count = big_endian(&header[28], 4);
  const bool count_valid = page_count > 0 && big_endian(&header[24], 4) == big_endian(&header[92], 4);
  const bool journal = nonempty_file(path.string() + "-wal") || nonempty_file(path.string() + "-journal");
  if (!page_size_ok ||
      (count_valid && !journal && size < std::uintmax_t{page_count} * page_size))
    throw InputError("database " + quoted(path) + " is truncated or corrupt (" +
                     std::to_string(size) + " bytes; its header describes " +
                     std::to_string(page_count) + " pages of " + std::to_string(page_size) +
                     " bytes); it was left unchanged. Restore it from a backup or use a new "
                     "database file.");

  // Without a write-ahead log the header is current: a newer ktune database is refused here,
  // before SQLite would create its -wal and -shm side files to read it.
  if (!nonempty_file(path.string() + "-wal") &&
      big_endian(&header[68], 4) == static_cast<std::uint32_t>(kApplicationId)) {
    const auto version = static_cast<std::int32_t>(big_endian(&header[60], 4));
    if (version > migrations::kLatestVersion) refuse_newer(path, version);
  }
  return true;
}

// Phase 2: an existing SQLite file, opened read-only: integrity and identity.
void inspect_readonly(const fs::path& path) {
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  struct Closer {
    sqlite3* db;
    ~Closer() { sqlite3_close_v2(db); }
  } closer{db};
  if (rc != SQLITE_OK)
    throw InputError("cannot open database " + quoted(path) + " for reading: " +
                     (db ? sqlite3_errmsg(db) : sqlite3_errstr(rc)) + ".");
  sqlite3_extended_result_codes(db, 1);
  sqlite3_busy_timeout(db, kBusyTimeoutMs);
  try {
    std::vector<std::string> problems;
    {
      Statement quick_check(db, "PRAGMA quick_check(5)", path);
      while (quick_check.step()) problems.push_back(quick_check.text(0));
    }
    if (problems.empty() || problems != std::vector<std::string>{"ok"})
      throw InputError("database " + quoted(path) + " is corrupt (quick_check: " +
                       join_names(problems, "; ") +
                       "); it was left unchanged. Restore it from a backup, recover it with "
                       "`sqlite3 " + path.string() + " .recover`, or use a new database file.");
    validate(read_contents(db, path), path);
  } catch (const InputError&) {
    throw;
  } catch (const std::exception& error) {
    throw InputError("database " + quoted(path) + " cannot be read as a SQLite database (" +
                     error.what() + "); it was left unchanged. Restore it from a backup or use a "
                     "new database file.");
  }
}

// Columns shared by load_measurements and best_measurements, in this order, from alias m.
constexpr const char* kMeasurementColumns =
    "m.id, m.run_id, m.config, m.outcome, m.message, m.median_ns, m.min_ns, m.max_ns, m.mean_ns, "
    "m.stddev_ns, m.rel_stddev, m.sample_count, m.samples, m.error, m.compile_ms, m.environment, "
    "m.measured_at, m.config_key";
constexpr int kMeasurementColumnCount = 18;

SampleStatistics read_stats(const Statement& row, int first) {
  SampleStatistics stats;
  stats.median_ns = row.real(first);
  stats.min_ns = row.real(first + 1);
  stats.max_ns = row.real(first + 2);
  stats.mean_ns = row.real(first + 3);
  stats.stddev_ns = row.real(first + 4);
  stats.rel_stddev = row.real(first + 5);
  stats.count = static_cast<std::size_t>(std::max<std::int64_t>(0, row.int64(first + 6)));
  return stats;
}

StoredMeasurement read_measurement(const Statement& row, const fs::path& path) {
  StoredMeasurement stored;
  stored.id = row.int64(0);
  stored.run_id = row.int64(1);
  const std::string where = "measurement " + std::to_string(stored.id);
  stored.config = Config::from_json(parse_json(row.text(2), path, where + " config"),
                                    "database " + path.string() + " " + where + " config");
  const std::string outcome_text = row.text(3);
  const auto outcome = parse_outcome(outcome_text);
  if (!outcome)
    throw InputError("database " + quoted(path) + ": " + where + " has unknown outcome '" +
                     outcome_text + "'.");
  EvaluationResult& result = stored.result;
  result.outcome = *outcome;
  result.message = row.text(4);
  result.stats = read_stats(row, 5);
  result.samples_ns = samples_from_json(parse_json(row.text(12), path, where + " samples"), path,
                                        where + " samples");
  result.error = row.real(13);
  result.compile_ms = row.real(14);
  result.environment = parse_json(row.text(15), path, where + " environment");
  stored.measured_at = row.text(16);
  return stored;
}

}  // namespace

void Store::Impl::open_read_write() {
  const int rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                                 nullptr);
  if (rc != SQLITE_OK)
    throw InputError("cannot open database " + quoted(path) + " for writing: " +
                     (db ? sqlite3_errmsg(db) : sqlite3_errstr(rc)) +
                     "; check that the file and its directory are writable by you.");
  sqlite3_extended_result_codes(db, 1);
  sqlite3_busy_timeout(db, kBusyTimeoutMs);
  // The file may have changed since it was inspected read-only: check again before writing.
  validate(read_contents(db, path), path);
  enable_wal();
  exec(db, "PRAGMA synchronous=NORMAL", path);
  exec(db, "PRAGMA foreign_keys=ON", path);
}

// Switching a new database to WAL needs an exclusive lock. When two processes create the
// database at once, SQLite answers SQLITE_BUSY at once instead of calling the busy handler
// (waiting could deadlock), so retry here until the busy timeout.
void Store::Impl::enable_wal() {
  constexpr std::string_view sql = "PRAGMA journal_mode=WAL";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kBusyTimeoutMs);
  auto pause = std::chrono::milliseconds(1);
  std::string got;
  for (;;) {
    sqlite3_stmt* stmt = nullptr;
    int rc = sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &stmt, nullptr);
    if (rc == SQLITE_OK) {
      rc = sqlite3_step(stmt);
      if (rc == SQLITE_ROW) {
        const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
        got = text ? text : "";
      }
    }
    sqlite3_finalize(stmt);
    if (rc == SQLITE_ROW || rc == SQLITE_DONE) break;
    if ((rc & 0xff) != SQLITE_BUSY || std::chrono::steady_clock::now() >= deadline)
      fail(db, rc, sql, path);
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(50));
  }
  if (got != "wal")
    throw InputError("database " + quoted(path) + ": cannot use write-ahead logging (the journal "
                     "mode stays '" + got + "'); keep the database on a local file system.");
}

// Applies pending migrations in order, each in its own transaction. Safe when several
// processes open a new database at once: the version is re-read under the write lock.
void Store::Impl::migrate() {
  if (user_version() >= migrations::kLatestVersion) {
    validate(read_contents(db, path), path);  // newer than latest: refuse
    return;
  }
  for (const auto& migration : migrations::kAll) {
    Transaction txn = transaction();
    const Contents contents = read_contents(db, path);
    validate(contents, path);
    if (contents.user_version >= migration.version) continue;  // applied (by another process)
    exec(db, migration.sql, path);
    {
      Statement record(db,
                       "INSERT INTO schema_migrations (version, name, applied_at) "
                       "VALUES (?1, ?2, ?3)",
                       path);
      record.bind_int(1, migration.version).bind_text(2, migration.name).bind_text(3, now_iso8601());
      record.run();
    }
    exec(db, "PRAGMA user_version = " + std::to_string(migration.version), path);
    exec(db, "PRAGMA application_id = " + std::to_string(kApplicationId), path);
    txn.commit();
  }
}

Store::Store(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Store::Store(Store&&) noexcept = default;
Store& Store::operator=(Store&&) noexcept = default;
Store::~Store() = default;

Store Store::open(const fs::path& path) {
  if (path.empty()) throw InputError("no database path given; pass the path of a database file.");
  if (inspect_file(path)) inspect_readonly(path);
  auto impl = std::make_unique<Impl>();
  impl->path = path;
  impl->open_read_write();
  impl->migrate();
  return Store(std::move(impl));
}

const fs::path& Store::path() const { return Impl::of(impl_).path; }

int Store::schema_version() const { return static_cast<int>(Impl::of(impl_).user_version()); }

int Store::latest_schema_version() { return migrations::kLatestVersion; }

std::int64_t Store::upsert_device(const DeviceInfo& device) {
  Impl& self = Impl::of(impl_);
  if (device.fingerprint.empty())
    throw std::invalid_argument("Store::upsert_device: the device has no fingerprint");
  nlohmann::json limits = nlohmann::json::object();
  for (const auto& [name, value] : device.limits) limits[name] = value;
  const std::string now = now_iso8601();
  Transaction txn = self.transaction();
  {
    Query insert = self.query(
        "INSERT INTO devices (fingerprint, backend, name, vendor, architecture, limits, properties, "
        "first_seen, last_seen) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?8) "
        "ON CONFLICT (fingerprint) DO UPDATE SET backend = excluded.backend, name = excluded.name, "
        "vendor = excluded.vendor, architecture = excluded.architecture, limits = excluded.limits, "
        "properties = excluded.properties, last_seen = excluded.last_seen");
    insert->bind_text(1, device.fingerprint)
        .bind_text(2, device.backend)
        .bind_text(3, device.name)
        .bind_text(4, device.vendor)
        .bind_text(5, device.architecture)
        .bind_text(6, dump(limits))
        .bind_text(7, dump(device.properties))
        .bind_text(8, now);
    insert->run();
  }
  std::int64_t id = 0;
  {
    Query select = self.query("SELECT id FROM devices WHERE fingerprint = ?1");
    select->bind_text(1, device.fingerprint);
    if (!select->step()) throw std::logic_error("Store::upsert_device: row vanished");
    id = select->int64(0);
  }
  txn.commit();
  return id;
}

std::int64_t Store::upsert_kernel(const std::string& family, const std::string& backend,
                                  const std::string& source_hash) {
  Impl& self = Impl::of(impl_);
  Transaction txn = self.transaction();
  {
    Query insert = self.query(
        "INSERT INTO kernels (family, backend, source_hash, first_seen) VALUES (?1, ?2, ?3, ?4) "
        "ON CONFLICT (family, backend, source_hash) DO NOTHING");
    insert->bind_text(1, family).bind_text(2, backend).bind_text(3, source_hash).bind_text(4, now_iso8601());
    insert->run();
  }
  std::int64_t id = 0;
  {
    Query select = self.query(
        "SELECT id FROM kernels WHERE family = ?1 AND backend = ?2 AND source_hash = ?3");
    select->bind_text(1, family).bind_text(2, backend).bind_text(3, source_hash);
    if (!select->step()) throw std::logic_error("Store::upsert_kernel: row vanished");
    id = select->int64(0);
  }
  txn.commit();
  return id;
}

std::int64_t Store::upsert_problem(const Problem& problem) {
  Impl& self = Impl::of(impl_);
  nlohmann::json dims = nlohmann::json::array();
  for (const auto& [name, value] : problem.dims) dims.push_back(nlohmann::json::array({name, value}));
  const std::string key = problem.key();
  Transaction txn = self.transaction();
  {
    Query insert = self.query(
        "INSERT INTO problems (family, key, dims, precision) VALUES (?1, ?2, ?3, ?4) "
        "ON CONFLICT (family, key) DO NOTHING");
    insert->bind_text(1, problem.family)
        .bind_text(2, key)
        .bind_text(3, dump(dims))
        .bind_text(4, to_string(problem.precision));
    insert->run();
  }
  std::int64_t id = 0;
  {
    Query select = self.query("SELECT id FROM problems WHERE family = ?1 AND key = ?2");
    select->bind_text(1, problem.family).bind_text(2, key);
    if (!select->step()) throw std::logic_error("Store::upsert_problem: row vanished");
    id = select->int64(0);
  }
  txn.commit();
  return id;
}

std::int64_t Store::begin_run(const RunInfo& run, std::int64_t device_id, std::int64_t kernel_id,
                              std::int64_t problem_id) {
  Impl& self = Impl::of(impl_);
  Transaction txn = self.transaction();
  {
    Query insert = self.query(
        "INSERT INTO runs (started_at, status, command, ktune_version, git_commit, argv, hostname, "
        "strategy, seed, device_id, kernel_id, problem_id) "
        "VALUES (?1, 'running', ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)");
    insert->bind_text(1, now_iso8601())
        .bind_text(2, run.command)
        .bind_text(3, run.ktune_version)
        .bind_text(4, run.git_commit)
        .bind_text(5, dump(nlohmann::json(run.argv)))
        .bind_text(6, run.hostname)
        .bind_text(7, run.strategy)
        .bind_int(8, static_cast<std::int64_t>(run.seed))
        .bind_int(9, device_id)
        .bind_int(10, kernel_id)
        .bind_int(11, problem_id);
    insert->run();
  }
  const std::int64_t id = sqlite3_last_insert_rowid(self.db);
  txn.commit();
  return id;
}

void Store::finish_run(std::int64_t run_id, const std::string& status) {
  Impl& self = Impl::of(impl_);
  Transaction txn = self.transaction();
  {
    Query update = self.query("UPDATE runs SET finished_at = ?1, status = ?2 WHERE id = ?3");
    update->bind_text(1, now_iso8601()).bind_text(2, status).bind_int(3, run_id);
    update->run();
  }
  if (sqlite3_changes(self.db) == 0)
    throw std::invalid_argument("Store::finish_run: no run with id " + std::to_string(run_id));
  txn.commit();
}

std::map<std::string, StoredMeasurement> Store::load_measurements(std::int64_t device_id,
                                                                  std::int64_t kernel_id,
                                                                  std::int64_t problem_id) {
  Impl& self = Impl::of(impl_);
  std::map<std::string, StoredMeasurement> out;
  Query select = self.query(std::string("SELECT ") + kMeasurementColumns +
                            " FROM measurements m WHERE m.device_id = ?1 AND m.kernel_id = ?2 "
                            "AND m.problem_id = ?3 ORDER BY m.id");
  select->bind_int(1, device_id).bind_int(2, kernel_id).bind_int(3, problem_id);
  while (select->step()) {
    StoredMeasurement stored = read_measurement(*select.operator->(), self.path);
    out.emplace(select->text(kMeasurementColumnCount - 1), std::move(stored));
  }
  return out;
}

std::optional<StoredMeasurement> Store::find_measurement(std::int64_t device_id, std::int64_t kernel_id,
                                                         std::int64_t problem_id, const std::string& config_key) {
  Impl& self = Impl::of(impl_);
  Query select = self.query(std::string("SELECT ") + kMeasurementColumns +
                            " FROM measurements m WHERE m.device_id = ?1 AND m.kernel_id = ?2 "
                            "AND m.problem_id = ?3 AND m.config_key = ?4");
  select->bind_int(1, device_id).bind_int(2, kernel_id).bind_int(3, problem_id).bind_text(4, config_key);
  if (!select->step()) return std::nullopt;
  return read_measurement(*select.operator->(), self.path);
}

std::int64_t Store::record_measurement(std::int64_t run_id, std::int64_t device_id,
                                       std::int64_t kernel_id, std::int64_t problem_id,
                                       const Config& config, const EvaluationResult& result,
                                       bool replace_existing) {
  Impl& self = Impl::of(impl_);
  const std::string key = config.key();
  // Stats as given when they describe the samples; recomputed when the caller did not fill them.
  const SampleStatistics stats = result.stats.count == result.samples_ns.size()
                                     ? result.stats
                                     : summarize(result.samples_ns);
  Transaction txn = self.transaction();
  {
    Query existing = self.query(
        "SELECT id FROM measurements WHERE device_id = ?1 AND kernel_id = ?2 AND problem_id = ?3 "
        "AND config_key = ?4");
    existing->bind_int(1, device_id).bind_int(2, kernel_id).bind_int(3, problem_id).bind_text(4, key);
    if (existing->step()) {
      const std::int64_t id = existing->int64(0);
      if (!replace_existing) return id;  // measured once, never twice; nothing written
      Query remove = self.query("DELETE FROM measurements WHERE id = ?1");
      remove->bind_int(1, id);
      remove->step();  // the new result takes its place in the same transaction
    }
  }
  {
    Query insert = self.query(
        "INSERT INTO measurements (run_id, device_id, kernel_id, problem_id, config_key, config, "
        "outcome, message, median_ns, min_ns, max_ns, mean_ns, stddev_ns, rel_stddev, "
        "sample_count, samples, error, compile_ms, environment, measured_at) VALUES "
        "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20)");
    insert->bind_int(1, run_id)
        .bind_int(2, device_id)
        .bind_int(3, kernel_id)
        .bind_int(4, problem_id)
        .bind_text(5, key)
        .bind_text(6, dump(config.to_json()))
        .bind_text(7, to_string(result.outcome))
        .bind_text(8, result.message)
        .bind_real(9, stats.median_ns)
        .bind_real(10, stats.min_ns)
        .bind_real(11, stats.max_ns)
        .bind_real(12, stats.mean_ns)
        .bind_real(13, stats.stddev_ns)
        .bind_real(14, stats.rel_stddev)
        .bind_int(15, static_cast<std::int64_t>(stats.count))
        .bind_text(16, dump(samples_to_json(result.samples_ns)))
        .bind_real(17, result.error)
        .bind_real(18, result.compile_ms)
        .bind_text(19, dump(result.environment))
        .bind_text(20, now_iso8601());
    insert->run();
  }
  const std::int64_t id = sqlite3_last_insert_rowid(self.db);
  txn.commit();
  return id;
}

std::vector<BestMeasurement> Store::best_measurements(const std::string& family) {
  Impl& self = Impl::of(impl_);
  // Rank the timed ok measurements of each (device, kernel, problem) by median (ties: oldest).
  Query select = self.query(
      std::string("WITH ranked AS (SELECT m.*, ROW_NUMBER() OVER (PARTITION BY m.device_id, "
                  "m.kernel_id, m.problem_id ORDER BY m.median_ns, m.id) AS place "
                  "FROM measurements m JOIN kernels k ON k.id = m.kernel_id "
                  "WHERE m.outcome = 'ok' AND m.sample_count > 0 AND m.median_ns IS NOT NULL "
                  "AND (?1 = '' OR k.family = ?1)) "
                  "SELECT ") +
      kMeasurementColumns +
      ", d.backend, d.name, d.vendor, d.architecture, d.fingerprint, d.limits, d.properties, "
      "k.family, k.backend, k.source_hash, p.family, p.dims, p.precision, "
      "r.ktune_version, r.git_commit "
      "FROM ranked m JOIN devices d ON d.id = m.device_id JOIN kernels k ON k.id = m.kernel_id "
      "JOIN problems p ON p.id = m.problem_id JOIN runs r ON r.id = m.run_id "
      "WHERE m.place = 1");
  select->bind_text(1, family);
  std::vector<BestMeasurement> out;
  const fs::path& path = self.path;
  while (select->step()) {
    const Statement& row = *select.operator->();
    const StoredMeasurement stored = read_measurement(row, path);
    const std::string where = "measurement " + std::to_string(stored.id);
    BestMeasurement best;
    best.measurement_id = stored.id;
    best.config = stored.config;
    best.stats = stored.result.stats;
    best.error = stored.result.error;
    best.measured_at = stored.measured_at;
    int c = kMeasurementColumnCount;
    best.device.backend = row.text(c++);
    best.device.name = row.text(c++);
    best.device.vendor = row.text(c++);
    best.device.architecture = row.text(c++);
    best.device.fingerprint = row.text(c++);
    const nlohmann::json limits = parse_json(row.text(c++), path, where + " device limits");
    try {
      for (const auto& [name, value] : limits.items())
        best.device.limits[name] = value.get<std::int64_t>();
    } catch (const nlohmann::json::exception& error) {
      throw InputError("database " + quoted(path) + ": " + where + " device limits: " + error.what());
    }
    best.device.properties = parse_json(row.text(c++), path, where + " device properties");
    best.family = row.text(c++);
    best.backend = row.text(c++);
    best.source_hash = row.text(c++);
    best.problem.family = row.text(c++);
    const nlohmann::json dims = parse_json(row.text(c++), path, where + " problem dims");
    try {
      for (const auto& dim : dims)
        best.problem.dims.emplace_back(dim.at(0).get<std::string>(), dim.at(1).get<std::int64_t>());
    } catch (const nlohmann::json::exception& error) {
      throw InputError("database " + quoted(path) + ": " + where + " problem dims: " + error.what());
    }
    const std::string precision = row.text(c++);
    const auto parsed = parse_precision(precision);
    if (!parsed)
      throw InputError("database " + quoted(path) + ": " + where + " has unknown precision '" +
                       precision + "'.");
    best.problem.precision = *parsed;
    best.ktune_version = row.text(c++);
    best.git_commit = row.text(c++);
    out.push_back(std::move(best));
  }
  // Ordered by backend, device, problem (dims compared numerically), then kernel source.
  std::sort(out.begin(), out.end(), [](const BestMeasurement& a, const BestMeasurement& b) {
    return std::tie(a.backend, a.device.name, a.device.fingerprint, a.family, a.problem.dims,
                    a.problem.precision, a.source_hash, a.measurement_id) <
           std::tie(b.backend, b.device.name, b.device.fingerprint, b.family, b.problem.dims,
                    b.problem.precision, b.source_hash, b.measurement_id);
  });
  return out;
}

std::vector<std::string> Store::measured_families() {
  Impl& self = Impl::of(impl_);
  Query select = self.query(
      "SELECT k.family FROM kernels k WHERE EXISTS (SELECT 1 FROM measurements m WHERE "
      "m.kernel_id = k.id) GROUP BY k.family ORDER BY k.family");
  std::vector<std::string> out;
  while (select->step()) out.push_back(select->text(0));
  return out;
}

}  // namespace ktune
