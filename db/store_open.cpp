// Opening a results database: classifying the file, switching it to WAL and applying pending
// migrations. See store.hpp for the contract and db/migrations/*.sql for the schema.
//
// A database the user may not write (Store::may_write) is refused first: opening it read-write
// would fail at the first write, after SQLite had left files beside it.
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
#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <utility>

#include "db/store.hpp"
#include "db/store_classify.hpp"
#include "db/store_impl.hpp"
#include "ktune/migrations.hpp"
#include "tuner/core/errors.hpp"

namespace ktune {
namespace fs = std::filesystem;
using namespace store_detail;

void Store::Impl::open_read_write() {
  const int rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                                 nullptr);
  if (rc != SQLITE_OK)
    throw InputError("cannot open database " + quoted(path) + " for writing: " +
                     (db ? sqlite3_errmsg(db) : sqlite3_errstr(rc)) +
                     "; check that the file and its directory are writable by you.");
  sqlite3_extended_result_codes(db, 1);
  sqlite3_busy_timeout(db, write_lock_attempt_ms());
  // The file may have changed since it was inspected read-only: check again before writing.
  validate(read_contents(db, path), path);
  enable_wal();
  // FULL: a commit is on disk when it returns, also across a power loss (NORMAL in WAL mode may
  // roll back the last commits). It costs one more fsync a result: 0.16 ms against 0.015 ms on
  // the development machine's disk, nothing beside a config's measurement.
  exec(db, "PRAGMA synchronous=FULL", path);
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
  const bool existing = inspect_file(path);
  // Before SQLite opens it: even a read-only connection leaves -wal and -shm files beside it.
  if (!may_write(path))
    throw InputError("database " + quoted(path) + " is read-only to you (the file or its directory), and this "
                     "command writes to it. ktune export and ktune report only read it, and ktune bench reads it "
                     "without storing its run; to write, make the file and its directory writable or use another "
                     "database file.");
  if (existing) inspect_readonly(path);
  auto impl = std::make_unique<Impl>();
  impl->path = path;
  impl->open_read_write();
  impl->migrate();
  impl->identity.record(path);  // what later writes check they still write to
  impl->identity.record_wal(path);
  return Store(std::move(impl));
}

const fs::path& Store::path() const { return Impl::of(impl_).path; }

int Store::schema_version() const { return static_cast<int>(Impl::of(impl_).user_version()); }

int Store::latest_schema_version() { return migrations::kLatestVersion; }

}  // namespace ktune
