// Whether a file is a database this ktune can use, decided without writing to it: a new file, an
// empty SQLite database, or a ktune database of a schema version this binary knows. Used by
// store_open.cpp before and while it opens a database, and by store_open_read_only.cpp. Internal
// to db/.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace ktune::store_detail {

// PRAGMA application_id of every ktune database: "ktun" in ASCII. Together with the
// schema_migrations table it marks a file as a ktune database.
inline constexpr std::int32_t kApplicationId = 0x6B74756E;

// What a SQLite file holds, as far as ktune cares.
struct Contents {
  std::int64_t application_id = 0;
  std::int64_t user_version = 0;
  std::vector<std::string> tables;  // user tables, sorted
  std::int64_t objects = 0;         // everything in sqlite_schema
  bool has_migrations_table = false;
  std::int64_t max_migration = 0;
};

// Reads the marker, the schema version and the list of objects of an open database, from one
// snapshot.
Contents read_contents(sqlite3* db, const std::filesystem::path& path);

// Throws InputError unless the file is an empty SQLite database or a ktune database this binary
// can use. Returns true for a ktune database, false for an empty one.
bool validate(const Contents& contents, const std::filesystem::path& path);

// Phase 1 of opening: looks at the file without SQLite. Returns false for a new database (no
// file or an empty one), true for a file that starts like a SQLite database; throws InputError
// otherwise.
bool inspect_file(const std::filesystem::path& path);

// Integrity (PRAGMA quick_check) and identity (validate) of a database open on `db`; returns what
// it holds. Throws InputError when it must be refused.
Contents inspect_connection(sqlite3* db, const std::filesystem::path& path);

// Phase 2 of opening: an existing SQLite file, opened read-only: integrity (quick_check) and
// identity (validate). Throws InputError when it must be refused.
void inspect_readonly(const std::filesystem::path& path);

}  // namespace ktune::store_detail
