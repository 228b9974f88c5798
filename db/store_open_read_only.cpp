// Opening a results database without writing to it, for commands that only read (export,
// report, bench's tuned configs) on a file or folder the user may only read. See store.hpp for
// the contract and read_only_connection.hpp for how SQLite is kept from writing.
//
// The checks are open()'s, on the read-only connection: the file is inspected without SQLite,
// then quick_check and the ktune marker. One more is needed here: a database of an older schema
// is refused, since open() would migrate it and a read-only open must not.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <string>
#include <utility>

#include "db/read_only_connection.hpp"
#include "db/store.hpp"
#include "db/store_classify.hpp"
#include "db/store_impl.hpp"
#include "ktune/migrations.hpp"
#include "tuner/core/errors.hpp"

namespace ktune {
namespace fs = std::filesystem;
using namespace store_detail;

namespace {

// access(2) answers for the user, and always yes to root; the permission bits say whether the
// file was meant to be written at all.
bool writable(const fs::path& path) {
  struct stat status {};
  return ::access(path.c_str(), W_OK) == 0 && ::stat(path.c_str(), &status) == 0 && (status.st_mode & 0222) != 0;
}

[[noreturn]] void refuse_older(const fs::path& path, std::int64_t version) {
  throw InputError("database " + quoted(path) + " has schema version " + std::to_string(version) +
                   ", older than the version " + std::to_string(migrations::kLatestVersion) +
                   " this ktune reads, and it is read-only to you, so it cannot be upgraded; it was left "
                   "unchanged. Run this ktune on it once where you may write it (any command upgrades it), "
                   "or copy it to a folder you can write and pass the copy with --db.");
}

}  // namespace

Store Store::open_read_only(const fs::path& path) {
  if (path.empty()) throw InputError("no database path given; pass the path of a database file.");
  std::error_code error;
  if (!fs::exists(path, error) && !error)
    throw InputError("database " + quoted(path) + " does not exist; run `ktune tune` first or pass --db PATH.");
  if (!inspect_file(path))
    throw InputError("database " + quoted(path) + " is empty and holds no results; run `ktune tune --db " +
                     path.string() + "` first or pass another --db.");
  auto impl = std::make_unique<Impl>();
  impl->path = path;
  impl->read_only = true;
  impl->db = open_read_only_connection(path);
  const Contents contents = inspect_connection(impl->db, path);
  if (contents.application_id != kApplicationId)
    throw InputError("database " + quoted(path) + " is an empty SQLite database and holds no results; run "
                     "`ktune tune --db " + path.string() + "` first or pass another --db.");
  const std::int64_t version = std::max(contents.user_version, contents.max_migration);
  if (version < migrations::kLatestVersion) refuse_older(path, version);
  return Store(std::move(impl));
}

bool Store::may_write(const fs::path& path) {
  const fs::path folder = path.parent_path().empty() ? fs::path(".") : path.parent_path();
  std::error_code error;
  return writable(folder) && (!fs::exists(path, error) || writable(path));
}

Store Store::open_as_permitted(const fs::path& path) {
  return may_write(path) ? open(path) : open_read_only(path);
}

bool Store::read_only() const { return Impl::of(impl_).read_only; }

}  // namespace ktune
