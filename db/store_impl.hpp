// Store's private state, shared by the store's source files (store_open.cpp: opening,
// migrations; store_open_read_only.cpp: opening without writing; store.cpp: tuning results;
// bench_history_store.cpp: bench history and tuning traces; store_merge.cpp: merging
// databases). Internal to db/.
#pragma once

#include <sqlite3.h>

#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <unordered_map>

#include "db/sqlite_support.hpp"
#include "db/store.hpp"

namespace ktune {

struct Store::Impl {
  std::filesystem::path path;
  sqlite3* db = nullptr;
  bool read_only = false;  // opened by Store::open_read_only
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
  // Every write goes through a transaction: the one place a read-only store refuses to write.
  store_detail::Transaction transaction() {
    if (read_only)
      throw std::logic_error("database " + store_detail::quoted(path) +
                             " was opened read-only; nothing may write to it");
    identity.check(path);
    return store_detail::Transaction(db, path);
  }
  // The files this connection writes, checked before each write: a database replaced, or its
  // write-ahead log deleted, while this process has them open would take the writes that follow
  // where no other process reads them.
  store_detail::FileIdentity identity;
  std::int64_t user_version() { return store_detail::pragma_int(db, "user_version", path); }

  void open_read_write();
  // Switching a new database to WAL needs an exclusive lock; see store_open.cpp.
  void enable_wal();
  // Applies pending migrations in order, each in its own transaction.
  void migrate();
};

}  // namespace ktune
