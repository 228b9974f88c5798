// Tests of opening the results store without writing to it (Store::open_read_only, may_write,
// open_as_permitted): nothing is written to the file or created beside it, a live writer's log
// is still read, an older schema is refused naming the file, and writing to a read-only store
// is refused. The tests run as root too: permission bits are checked as ktune reads them, and
// "unchanged" is checked on the bytes, not left to the file system.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "db/store.hpp"
#include "tests/unit/file_bytes.hpp"
#include "tuner/core/errors.hpp"

namespace fs = std::filesystem;
using namespace ktune;

namespace {

using ktune::testing::read_bytes;

std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

void sql(const fs::path& path, const std::string& statements) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* message = nullptr;
  const int rc = sqlite3_exec(db, statements.c_str(), nullptr, nullptr, &message);
  EXPECT_EQ(rc, SQLITE_OK) << (message ? message : "");
  sqlite3_free(message);
  sqlite3_close(db);
}

DeviceInfo cpu_device() {
  DeviceInfo device;
  device.backend = "cpu";
  device.name = "Test CPU";
  device.vendor = "intel";
  device.architecture = "x86_64-avx2";
  device.fingerprint = "cpu:read-only-test";
  return device;
}

// Records one ok rmsnorm measurement per (threads, median time) into an open store, as one run.
void record(Store& store, const std::vector<std::pair<std::int64_t, double>>& measured) {
  const auto device = store.upsert_device(cpu_device());
  const auto kernel = store.upsert_kernel("rmsnorm", "cpu", "hash");
  Problem problem;
  problem.family = "rmsnorm";
  problem.dims = {{"rows", 64}, {"cols", 256}};
  const auto problem_id = store.upsert_problem(problem);
  RunInfo run;
  run.command = "tune";
  const auto run_id = store.begin_run(run, device, kernel, problem_id);
  for (const auto& [threads, ns] : measured) {
    Config config;
    config.values = {{"threads", threads}};
    EvaluationResult result;
    result.outcome = Outcome::ok;
    result.samples_ns = {ns, ns};
    result.stats = summarize(result.samples_ns);
    store.record_measurement(run_id, device, kernel, problem_id, config, result);
  }
  store.finish_run(run_id, "finished");
}

std::int64_t best_threads(Store& store) {
  const auto best = store.best_measurements("rmsnorm");
  return best.size() == 1 ? best.front().config.to_json().at("threads").get<std::int64_t>() : -1;
}

class StoreReadOnlyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "ktune-read-only-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    db_ = dir_ / "results.db";
    Store store = Store::open(db_);
    record(store, {{1, 300.0}, {2, 200.0}, {4, 250.0}});
  }
  void TearDown() override {
    fs::permissions(dir_, fs::perms::owner_all);
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }

  // Expects `open` to refuse with an InputError whose message names the file and holds `what`.
  template <typename Open>
  void expect_refused(Open open, const std::string& what) {
    try {
      open();
      ADD_FAILURE() << "accepted " << db_;
    } catch (const InputError& error) {
      EXPECT_NE(std::string(error.what()).find(db_.string()), std::string::npos) << error.what();
      EXPECT_NE(std::string(error.what()).find(what), std::string::npos) << error.what();
    }
  }

  fs::path dir_;
  fs::path db_;
};

TEST_F(StoreReadOnlyTest, ReadsWithoutChangingTheFileOrCreatingAnythingBesideIt) {
  ASSERT_EQ(names_in(dir_), std::vector<std::string>{"results.db"});
  const std::string bytes = read_bytes(db_);
  const auto mtime = fs::last_write_time(db_);
  {
    Store store = Store::open_read_only(db_);
    EXPECT_TRUE(store.read_only());
    EXPECT_EQ(store.schema_version(), Store::latest_schema_version());
    EXPECT_EQ(store.measured_families(), std::vector<std::string>{"rmsnorm"});
    EXPECT_EQ(best_threads(store), 2);
    EXPECT_TRUE(store.bench_history().empty());
    EXPECT_EQ(names_in(dir_), std::vector<std::string>{"results.db"}) << "while open";
  }
  EXPECT_EQ(names_in(dir_), std::vector<std::string>{"results.db"});
  EXPECT_TRUE(read_bytes(db_) == bytes);
  EXPECT_EQ(fs::last_write_time(db_), mtime);
}

TEST_F(StoreReadOnlyTest, ReadsInAFolderThatIsReadOnly) {
  fs::permissions(db_, fs::perms::owner_read);
  fs::permissions(dir_, fs::perms::owner_read | fs::perms::owner_exec);
  Store store = Store::open_read_only(db_);
  EXPECT_EQ(best_threads(store), 2);
  EXPECT_EQ(names_in(dir_), std::vector<std::string>{"results.db"});
}

TEST_F(StoreReadOnlyTest, SeesWhatALiveWritersLogHolds) {
  Store writer = Store::open(db_);
  record(writer, {{8, 50.0}});  // the new best, in the log and not yet in the file
  ASSERT_TRUE(fs::exists(db_.string() + "-wal"));
  Store reader = Store::open_read_only(db_);
  EXPECT_EQ(best_threads(reader), 8);
}

TEST_F(StoreReadOnlyTest, ReadsAKilledWritersLogInAReadOnlyFolderAndRefusesHalfALog) {
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    try {
      auto* writer = new Store(Store::open(db_));  // never closed: like kill -9
      record(*writer, {{8, 50.0}});
    } catch (...) {
      _exit(1);
    }
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  ASSERT_EQ(names_in(dir_), (std::vector<std::string>{"results.db", "results.db-shm", "results.db-wal"}));
  fs::permissions(dir_, fs::perms::owner_read | fs::perms::owner_exec);
  {
    Store store = Store::open_read_only(db_);
    EXPECT_EQ(best_threads(store), 8);  // committed, though only in the log
  }
  fs::permissions(dir_, fs::perms::owner_all);
  fs::remove(db_.string() + "-shm");
  fs::permissions(dir_, fs::perms::owner_read | fs::perms::owner_exec);
  expect_refused([&] { Store::open_read_only(db_); }, "-shm file is missing");
  EXPECT_EQ(names_in(dir_), (std::vector<std::string>{"results.db", "results.db-wal"}));
}

TEST_F(StoreReadOnlyTest, WritingToAReadOnlyStoreIsABug) {
  Store store = Store::open_read_only(db_);
  EXPECT_THROW(store.upsert_device(cpu_device()), std::logic_error);
}

TEST_F(StoreReadOnlyTest, RefusesAnOlderSchemaNamingTheFileAndLeavesIt) {
  sql(db_, "DROP TABLE bench_results; DROP TABLE bench_runs; ALTER TABLE runs DROP COLUMN notes; ALTER TABLE runs DROP COLUMN owner; DROP TABLE claims; "
           "ALTER TABLE runs DROP COLUMN kernel_share; ALTER TABLE runs DROP COLUMN between_share; "
           "ALTER TABLE runs DROP COLUMN configs_per_minute; "
           "DELETE FROM schema_migrations WHERE version > 1; PRAGMA user_version = 1;");
  ASSERT_EQ(names_in(dir_), std::vector<std::string>{"results.db"});
  const std::string bytes = read_bytes(db_);
  expect_refused([&] { Store::open_read_only(db_); }, "older than the version");
  EXPECT_TRUE(read_bytes(db_) == bytes);
  EXPECT_EQ(names_in(dir_), std::vector<std::string>{"results.db"});
  // Where the user may write it, open_as_permitted upgrades it as open() always has.
  Store store = Store::open_as_permitted(db_);
  EXPECT_FALSE(store.read_only());
  EXPECT_EQ(store.schema_version(), Store::latest_schema_version());
}

TEST_F(StoreReadOnlyTest, RefusesAMissingOrEmptyFileWithoutCreatingOne) {
  fs::remove(db_);
  expect_refused([&] { Store::open_read_only(db_); }, "does not exist");
  EXPECT_FALSE(fs::exists(db_));
  std::ofstream(db_).close();
  expect_refused([&] { Store::open_read_only(db_); }, "is empty");
  EXPECT_EQ(fs::file_size(db_), 0u);
}

TEST_F(StoreReadOnlyTest, PermissionBitsDecideEvenForRoot) {
  EXPECT_TRUE(Store::may_write(db_));
  EXPECT_TRUE(Store::may_write(dir_ / "new.db"));
  fs::permissions(db_, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  EXPECT_FALSE(Store::may_write(db_));
  EXPECT_TRUE(Store::open_as_permitted(db_).read_only());
  expect_refused([&] { Store::open(db_); }, "is read-only to you");
  EXPECT_EQ(names_in(dir_), std::vector<std::string>{"results.db"});

  fs::permissions(db_, fs::perms::owner_read | fs::perms::owner_write);
  fs::permissions(dir_, fs::perms::owner_read | fs::perms::owner_exec);
  EXPECT_FALSE(Store::may_write(db_));  // WAL needs the folder too
  EXPECT_FALSE(Store::may_write(dir_ / "new.db"));
}

}  // namespace
