// A SQLite connection that reads a database file and writes nothing: not the file, and nothing
// beside it. Used by Store::open_read_only and by Store::merge_from for its sources. Internal to
// db/.
//
// A plain read-only open is not enough for a WAL database: to read one, SQLite creates the -wal
// and -shm files beside it, which fails in a folder the user may not write, and in a shared
// folder leaves files owned by the reader. So:
//   - when a -wal, -shm or -journal file exists (a writer is at work, or one was killed before
//     it folded its log into the file), SQLite reads with its usual locks ("mode=ro"), so what the
//     log holds is seen and a concurrent writer cannot tear a read;
//   - otherwise everything committed is in the file itself, and it is read as "immutable": no
//     locks, nothing created. The assumption is that the file does not change while it is read;
//     a writer that starts meanwhile changes it only when it folds its log back (every 1000
//     pages, and when it closes), which a read as short as export's or report's rarely meets.
#pragma once

#include <sqlite3.h>

#include <filesystem>

namespace ktune::store_detail {

// Opens `path` for reading and reads its schema once, so that a file SQLite cannot read is
// refused here. The caller closes the connection (sqlite3_close_v2). Throws InputError naming
// the file, with what to do, when it cannot be read.
sqlite3* open_read_only_connection(const std::filesystem::path& path);

}  // namespace ktune::store_detail
