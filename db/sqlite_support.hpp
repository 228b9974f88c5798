// What the store's source files share: the SQLite error check, a prepared-statement wrapper, a
// write transaction, timestamps and JSON columns. Internal to db/ (store_open.cpp,
// store_classify.cpp, store.cpp, bench_history_store.cpp, store_merge.cpp); callers use store.hpp.
#pragma once

#include <sqlite3.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <ctime>
#include <filesystem>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "tuner/core/errors.hpp"

namespace ktune::store_detail {
namespace fs = std::filesystem;

inline constexpr int kBusyTimeoutMs = 30000;

// How long one attempt to take the write lock waits (SQLite's busy handler): kBusyTimeoutMs, or
// KTUNE_DB_BUSY_TIMEOUT_MS (for tests, and file systems whose locks are slow to free).
inline int write_lock_attempt_ms() {
  static const int ms = [] {
    const char* text = std::getenv("KTUNE_DB_BUSY_TIMEOUT_MS");
    const long value = text && *text ? std::strtol(text, nullptr, 10) : 0;
    return value > 0 && value <= 3'600'000 ? static_cast<int>(value) : kBusyTimeoutMs;
  }();
  return ms;
}

// Checked while a write waits for a lock another process holds: true ends the wait (a stop
// signal). Set once by the command line (Store::set_stop_check).
inline bool (*g_lock_wait_stop)() = nullptr;

inline std::string quoted(const fs::path& path) { return "'" + path.string() + "'"; }

// The device and inode of a database file and of its write-ahead log, as first seen.
class FileIdentity {
 public:
  void record(const fs::path& path) { have_file_ = stat_of(path.string(), file_); }
  void record_wal(const fs::path& path) {
    if (!have_wal_) have_wal_ = stat_of(path.string() + "-wal", wal_);
  }
  // InputError naming the tampering when the file or its log is no longer the one recorded.
  void check(const fs::path& path) {
    record_wal(path);  // when the log did not exist yet at the first look
    struct stat now {};
    if (have_file_ && (!stat_of(path.string(), now) || now.st_ino != file_.st_ino || now.st_dev != file_.st_dev))
      throw InputError("database " + quoted(path) + " was replaced, moved or deleted while this process had it open; "
                       "nothing more was written, since it would have gone to a file no one else reads. What was "
                       "written before is in the file this process opened. Do not replace a database in use");
    if (have_wal_ && (!stat_of(path.string() + "-wal", now) || now.st_ino != wal_.st_ino || now.st_dev != wal_.st_dev))
      throw InputError("the write-ahead log " + quoted(fs::path(path.string() + "-wal")) + " was deleted or replaced while this "
                       "process had it open; nothing more was written (its writes would be lost). Do not delete a "
                       "database's -wal and -shm files while ktune uses it");
  }

 private:
  static bool stat_of(const std::string& path, struct stat& out) { return ::stat(path.c_str(), &out) == 0; }
  struct stat file_ {};
  struct stat wal_ {};
  bool have_file_ = false;
  bool have_wal_ = false;
};

inline std::string now_iso8601() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  const auto millis =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[40];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &utc);
  char out[48];
  std::snprintf(out, sizeof out, "%s.%03dZ", text, static_cast<int>(millis));
  return out;
}

// JSON text for a column; invalid UTF-8 (e.g. in compiler output) is replaced, not fatal.
inline std::string dump(const nlohmann::json& json) {
  return json.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

inline std::string shorten(std::string_view sql) {
  constexpr std::size_t kMax = 240;
  std::string out(sql.substr(0, kMax));
  for (char& c : out)
    if (c == '\n') c = ' ';
  if (sql.size() > kMax) out += "...";
  return out;
}

// The one error check: throws with the file, the SQL and sqlite3_errmsg. Errors that are about
// the database file (locked, read-only, full disk, I/O, corruption) are the user's to fix and
// throw InputError with a hint; anything else is a bug in ktune and throws std::runtime_error.
[[noreturn]] inline void fail(sqlite3* db, int rc, std::string_view sql, const fs::path& path) {
  const std::string message = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  const std::string code = sqlite3_errstr(rc);
  const std::string detail =
      message + (message == code ? "" : " (" + code + ")") + " while running: " + shorten(sql);
  std::string hint;
  switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      hint = "Another process kept the database locked for more than " +
             std::to_string(kBusyTimeoutMs / 1000) + " s; retry when it has finished";
      break;
    case SQLITE_READONLY:
    case SQLITE_PERM:
    case SQLITE_CANTOPEN:
    case SQLITE_AUTH:
      hint = "Check that the file and its directory exist and are writable by you";
      break;
    case SQLITE_FULL: hint = "The disk is full; free some space and rerun"; break;
    case SQLITE_IOERR: hint = "The file could not be read or written (I/O error)"; break;
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      hint = "The database is corrupt; restore it from a backup, recover it with `sqlite3 " +
             path.string() + " .recover`, or use a new database file";
      break;
    default:
      throw std::runtime_error("database " + quoted(path) + ": " + detail);
  }
  throw InputError("database " + quoted(path) + ": " + detail + ". " + hint);
}

inline void check(sqlite3* db, int rc, std::string_view sql, const fs::path& path) {
  if (rc != SQLITE_OK && rc != SQLITE_ROW && rc != SQLITE_DONE) fail(db, rc, sql, path);
}

inline void exec(sqlite3* db, std::string_view sql, const fs::path& path) {
  check(db, sqlite3_exec(db, std::string(sql).c_str(), nullptr, nullptr, nullptr), sql, path);
}

// RAII prepared statement. Columns that hold NULL read as NaN (SQLite stores NaN as NULL).
class Statement {
 public:
  Statement(sqlite3* db, std::string_view sql, const fs::path& path)
      : db_(db), sql_(sql), path_(&path) {
    check(db_, sqlite3_prepare_v2(db_, sql_.c_str(), static_cast<int>(sql_.size()), &stmt_, nullptr),
          sql_, *path_);
  }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement() { sqlite3_finalize(stmt_); }

  Statement& bind_int(int index, std::int64_t value) {
    return checked(sqlite3_bind_int64(stmt_, index, value));
  }
  Statement& bind_real(int index, double value) {
    return checked(sqlite3_bind_double(stmt_, index, value));
  }
  Statement& bind_text(int index, std::string_view value) {
    return checked(sqlite3_bind_text(stmt_, index, value.data(), static_cast<int>(value.size()),
                                     SQLITE_TRANSIENT));
  }
  // true while there is a row to read.
  bool step() {
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    fail(db_, rc, sql_, *path_);
  }
  void run() {
    while (step()) {
    }
  }
  // Ready for the next use; also ends the implicit read transaction of a half-read SELECT.
  void reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }

  bool is_null(int column) const { return sqlite3_column_type(stmt_, column) == SQLITE_NULL; }
  std::int64_t int64(int column) const { return sqlite3_column_int64(stmt_, column); }
  double real(int column) const {
    return is_null(column) ? std::numeric_limits<double>::quiet_NaN()
                           : sqlite3_column_double(stmt_, column);
  }
  std::string text(int column) const {
    const auto* data = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, column));
    return data ? std::string(data, static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column)))
                : std::string();
  }

 private:
  Statement& checked(int rc) {
    check(db_, rc, sql_, *path_);
    return *this;
  }

  sqlite3* db_;
  std::string sql_;
  const fs::path* path_;
  sqlite3_stmt* stmt_ = nullptr;
};

// A cached statement in use; resets it when the use ends.
class Query {
 public:
  explicit Query(Statement& statement) : statement_(statement) {}
  Query(const Query&) = delete;
  Query& operator=(const Query&) = delete;
  ~Query() { statement_.reset(); }
  Statement* operator->() { return &statement_; }

 private:
  Statement& statement_;
};

// BEGIN IMMEDIATE takes the write lock up front (waiting up to the busy timeout), so a
// transaction never fails half-way because another process wrote first.
class Transaction {
 public:
  // Takes the write lock, waiting as long as another process holds it: a result measured must
  // not be dropped because a reader or another tuner kept the file locked for a while. Each
  // attempt waits write_lock_attempt_ms(); between attempts a note says why nothing moves, and a
  // stop request (g_lock_wait_stop) ends the wait with the lock error.
  Transaction(sqlite3* db, const fs::path& path) : db_(db), path_(path) {
    const auto start = std::chrono::steady_clock::now();
    double noted = 0;
    for (;;) {
      const int rc = sqlite3_exec(db_, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr);
      if (rc == SQLITE_OK) return;
      if ((rc & 0xff) != SQLITE_BUSY || (g_lock_wait_stop && g_lock_wait_stop())) fail(db_, rc, "BEGIN IMMEDIATE", path_);
      const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (waited - noted >= 30 || noted == 0) {
        std::fprintf(stderr, "ktune: database %s is locked by another process (%.0f s so far); waiting to write\n",
                     quoted(path_).c_str(), waited);
        noted = waited > 0 ? waited : 1e-9;
      }
    }
  }
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  ~Transaction() {
    if (!done_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);  // errors ignored
  }
  void commit() {
    exec(db_, "COMMIT", path_);
    done_ = true;
  }

 private:
  sqlite3* db_;
  const fs::path& path_;
  bool done_ = false;
};

inline std::int64_t pragma_int(sqlite3* db, const char* pragma, const fs::path& path) {
  Statement statement(db, std::string("PRAGMA ") + pragma, path);
  return statement.step() ? statement.int64(0) : 0;
}

inline nlohmann::json parse_json(const std::string& text, const fs::path& path, const std::string& what) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& error) {
    throw InputError("database " + quoted(path) + ": " + what + " is not valid JSON (" +
                     error.what() + ").");
  }
}

inline nlohmann::json samples_to_json(const std::vector<double>& samples) {
  nlohmann::json array = nlohmann::json::array();
  for (double sample : samples) array.push_back(sample);  // NaN and infinities dump as null
  return array;
}

inline std::vector<double> samples_from_json(const nlohmann::json& json, const fs::path& path,
                                      const std::string& what) {
  if (!json.is_array()) throw InputError("database " + quoted(path) + ": " + what + " is not a JSON array.");
  std::vector<double> samples;
  samples.reserve(json.size());
  for (const auto& sample : json) {
    if (sample.is_number()) samples.push_back(sample.get<double>());
    else if (sample.is_null()) samples.push_back(std::numeric_limits<double>::quiet_NaN());
    else throw InputError("database " + quoted(path) + ": " + what + " holds a non-number.");
  }
  return samples;
}


}  // namespace ktune::store_detail
