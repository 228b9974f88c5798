// Opens a database for reading without writing anything (see read_only_connection.hpp for why
// a file with a log and one without are opened differently).
#include "db/read_only_connection.hpp"

#include <cstdio>
#include <string>
#include <vector>

#include "db/sqlite_support.hpp"
#include "db/store.hpp"
#include "tuner/core/errors.hpp"

namespace ktune::store_detail {
namespace {

// The log files SQLite keeps beside a database while it is written to.
std::vector<fs::path> existing_log_files(const fs::path& path) {
  std::vector<fs::path> found;
  std::error_code ignored;
  for (const char* suffix : {"-wal", "-shm", "-journal"}) {
    const fs::path file = path.string() + suffix;
    if (fs::exists(file, ignored)) found.push_back(file);
  }
  return found;
}

// A "file:" URI for SQLite: an absolute path with the characters URIs reserve escaped.
std::string file_uri(const fs::path& path, const std::string& parameters) {
  std::string uri = "file://";
  for (const char c : fs::absolute(path).string()) {
    if (c == '%' || c == '?' || c == '#') {
      char escaped[4];
      std::snprintf(escaped, sizeof escaped, "%%%02X", static_cast<unsigned char>(c));
      uri += escaped;
    } else {
      uri += c;
    }
  }
  return uri + "?" + parameters;
}

[[noreturn]] void refuse_log(const fs::path& path, const std::vector<fs::path>& logs, const std::string& why) {
  std::vector<std::string> names;
  for (const auto& log : logs) names.push_back(log.filename().string());
  throw InputError("cannot read database " + quoted(path) + " without writing: it has the log files " +
                   join_names(names) + " beside it, and SQLite cannot read them here (" + why +
                   "). Open it once with any ktune command where you may write it (that folds the log into "
                   "the file), or copy the database with its log files to a folder you can write and pass "
                   "the copy.");
}

}  // namespace

sqlite3* open_read_only_connection(const fs::path& path) {
  const std::vector<fs::path> logs = existing_log_files(path);
  // SQLite reads a write-ahead log through its -shm index and creates whichever of the two is
  // missing; in a folder the user may not write, that is refused here, before SQLite (which
  // would create it anyway when run by root).
  std::error_code ignored;
  const bool wal = fs::exists(path.string() + "-wal", ignored), shm = fs::exists(path.string() + "-shm", ignored);
  if (wal != shm && !Store::may_write(path))
    refuse_log(path, logs, std::string("its ") + (wal ? "-shm" : "-wal") + " file is missing and cannot be created");
  const std::string uri = file_uri(path, logs.empty() ? "mode=ro&immutable=1" : "mode=ro");
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(uri.c_str(), &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr);
  if (rc != SQLITE_OK) {
    const std::string why = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close_v2(db);
    throw InputError("cannot open database " + quoted(path) + " for reading: " + why + ".");
  }
  sqlite3_extended_result_codes(db, 1);
  sqlite3_busy_timeout(db, kBusyTimeoutMs);
  // SQLite opens the file lazily: the first read is where a log it cannot use shows.
  sqlite3_stmt* probe = nullptr;
  int read = sqlite3_prepare_v2(db, "SELECT count(*) FROM sqlite_master", -1, &probe, nullptr);
  if (read == SQLITE_OK) read = sqlite3_step(probe);
  const std::string why = read == SQLITE_ROW ? "" : sqlite3_errmsg(db);
  sqlite3_finalize(probe);
  const int primary = read & 0xff;
  if (!logs.empty() && (primary == SQLITE_CANTOPEN || primary == SQLITE_READONLY)) {
    sqlite3_close_v2(db);
    refuse_log(path, logs, why);
  }
  // Any other failure (not a database, corrupt) shows again on the caller's first read, which
  // says what is wrong with the file in its own words.
  return db;
}

}  // namespace ktune::store_detail
