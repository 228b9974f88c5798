// Store's private state, shared by the store's source files (store_open.cpp: opening,
// migrations; store.cpp: tuning results; bench_history_store.cpp: bench history and tuning
// traces; store_merge.cpp: merging databases). Internal to db/.
#pragma once

#include <sqlite3.h>

#include <filesystem>
#include <memory>
#include <string>
#include <unordered_map>

#include "db/sqlite_support.hpp"
#include "db/store.hpp"

namespace ktune {

struct Store::Impl {
  std::filesystem::path path;
  sqlite3* db = nullptr;
  std::unordered_map<std::string, std::unique_ptr<store_detail::Statement>> statements;

  Impl() = default;
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
  ~Impl() {
    statements.clear();      // finalize before closing
    sqlite3_close_v2(db);    // errors ignored: nothing useful to do in a destructor
  }

  static Impl& of(const std::unique_ptr<Impl>& impl) {
    if (!impl) throw std::logic_error("ktune::Store used after it was moved from");
    return *impl;
  }

  store_detail::Query query(const std::string& sql) {
    auto& slot = statements[sql];
    if (!slot) slot = std::make_unique<store_detail::Statement>(db, sql, path);
    return store_detail::Query(*slot);
  }
  store_detail::Transaction transaction() { return store_detail::Transaction(db, path); }
  std::int64_t user_version() { return store_detail::pragma_int(db, "user_version", path); }

  void open_read_write();
  // Switching a new database to WAL needs an exclusive lock; see store_open.cpp.
  void enable_wal();
  // Applies pending migrations in order, each in its own transaction.
  void migrate();
};

}  // namespace ktune
