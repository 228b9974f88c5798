// Classifies a database file before ktune writes to it (see store_classify.hpp and, for the
// order of the checks when opening, store_open.cpp).
#include "db/store_classify.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "db/sqlite_support.hpp"
#include "ktune/migrations.hpp"
#include "tuner/core/errors.hpp"

namespace ktune::store_detail {
namespace {

constexpr char kSqliteMagic[16] = {'S', 'Q', 'L', 'i', 't', 'e', ' ', 'f',
                                   'o', 'r', 'm', 'a', 't', ' ', '3', '\0'};

[[noreturn]] void refuse_newer(const fs::path& path, std::int64_t version) {
  throw InputError("database " + quoted(path) + " was written by a newer ktune (schema version " +
                   std::to_string(version) + "; this ktune knows versions up to " +
                   std::to_string(migrations::kLatestVersion) +
                   "). It was left unchanged; open it with a newer ktune, or use another "
                   "database file.");
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

}  // namespace

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

Contents inspect_connection(sqlite3* db, const fs::path& path) {
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
    Contents contents = read_contents(db, path);
    validate(contents, path);
    return contents;
  } catch (const InputError&) {
    throw;
  } catch (const std::exception& error) {
    throw InputError("database " + quoted(path) + " cannot be read as a SQLite database (" +
                     error.what() + "); it was left unchanged. Restore it from a backup or use a "
                     "new database file.");
  }
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
  inspect_connection(db, path);
}

}  // namespace ktune::store_detail
