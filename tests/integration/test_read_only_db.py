"""A results database the user may only read (a shared file, or one in a read-only folder):
`ktune export`, `report`, `bench` (with --tuned and without) and `db merge` (as a source) read
it and write nothing to it or beside it; a schema too old to read without upgrading is refused,
naming the file; a command that must write says the database is read-only.

Root ignores permission bits, so as root the files are also made immutable (chattr +i, which
stops root too) where the file system allows it. Either way each check compares the database's
bytes and mtime before and after and looks for -wal, -shm and -journal files beside it, which
catches a write whatever the permissions allowed."""
import os
import shutil
import sqlite3
import stat
import subprocess

import harness

SHAPE = "rows=64,cols=256"
TUNED_NAME = "rmsnorm/cpu/rows=64,cols=256/fp32"
FAST_BENCH = ["-b", "cpu", "-k", "rmsnorm", "--shape", SHAPE, "--repetitions", "2",
              "--max-seconds-per-repetition", "0.02", "--min-samples", "3", "--no-default", "--no-baseline"]


def chattr(flag, path):
    """True when the immutable attribute could be changed (needs root and a file system that has it)."""
    try:
        return subprocess.run(["chattr", flag, path], capture_output=True).returncode == 0
    except FileNotFoundError:
        return False


class ReadOnlyDatabase(harness.KtuneTestCase):
    def setUp(self):
        super().setUp()
        self.shared = os.path.join(self.dir, "shared")
        os.mkdir(self.shared)
        self.db = os.path.join(self.shared, "results.db")
        self.ktune("tune", "-k", "rmsnorm", "-b", "cpu", "--shape", SHAPE, "--budget", "6",
                   "--max-seconds-per-config", "0.02", "--db", self.db,
                   "--export-dir", os.path.join(self.dir, "generated"), check=0)
        self.ktune("bench", *FAST_BENCH, "--db", self.db, "--out", os.path.join(self.dir, "history.json"), check=0)
        self.assertEqual(os.listdir(self.shared), ["results.db"])  # closed cleanly: no log left

    def tearDown(self):
        self.doCleanups()  # writable and mutable again before the scratch directory is removed
        super().tearDown()

    def path(self, name):
        return os.path.join(self.dir, name)

    def lock(self, folder_too):
        """Makes the database (and its folder) read-only; as root, immutable too where possible."""
        locked = [self.db] + ([self.shared] if folder_too else [])
        for path in locked:
            mode = os.stat(path).st_mode
            os.chmod(path, mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
            self.addCleanup(os.chmod, path, mode)
        if os.geteuid() == 0:
            for path in locked:
                if chattr("+i", path):
                    self.addCleanup(chattr, "-i", path)  # runs before the chmod cleanups

    def state(self):
        with open(self.db, "rb") as f:
            content = f.read()
        return content, os.stat(self.db).st_mtime_ns, sorted(os.listdir(self.shared))

    def assert_reads_without_writing(self):
        before = self.state()

        exported = self.ktune_json("export", "--db", self.db, "--out", self.path("tuned"))
        self.assertEqual(exported["exported"][0]["kernel"], "rmsnorm")
        self.assertGreaterEqual(exported["exported"][0]["entries"], 1)
        self.assertTrue(os.path.isfile(self.path("tuned/cpu/rmsnorm.hpp")))

        report = self.ktune_json("report", "--db", self.db, "--out", self.path("report"))
        self.assertGreaterEqual(report["groups"], 1)
        self.assertEqual(report["series"], 1)  # the bench run stored before the lock

        for args, source in ((["--tuned", self.path("generated")], "header"), ([], "database")):
            summary = self.ktune_json("bench", *FAST_BENCH, *args, "--db", self.db, "--out", self.path("bench.json"))
            tuned = [b for b in summary["benchmarks"] if b["name"] == TUNED_NAME]
            self.assertEqual([b["config_source"] for b in tuned], [source])
            self.assertEqual(tuned[0]["outcome"], "ok")
            self.assertIsNone(summary["bench_run_id"])  # not stored: the database is only read
        said = self.ktune("bench", *FAST_BENCH, "--db", self.db, "--out", self.path("bench.json"), check=0)
        self.assertIn("read-only to you, so this run is not in its history", said.stdout)

        merged = self.ktune_json("db", "merge", self.db, "--into", self.path("merged.db"))
        self.assertGreater(merged["merged"][0]["measurements"], 0)

        after = self.state()
        self.assertEqual(after[2], before[2], "files appeared beside the database")
        self.assertEqual(after[1], before[1], "the database's mtime changed")
        self.assertTrue(after[0] == before[0], "the database's bytes changed")

    def test_read_only_file(self):
        self.lock(folder_too=False)
        self.assert_reads_without_writing()

    def test_read_only_file_in_read_only_folder(self):
        self.lock(folder_too=True)
        self.assert_reads_without_writing()

    def test_older_schema_is_refused_naming_the_file(self):
        # Back to schema version 1: as a database written before bench history was added.
        with sqlite3.connect(self.db) as connection:
            connection.executescript("DROP TABLE bench_results; DROP TABLE bench_runs; ALTER TABLE runs DROP COLUMN notes; ALTER TABLE runs DROP COLUMN owner; DROP TABLE claims; "
                                     "ALTER TABLE runs DROP COLUMN kernel_share; ALTER TABLE runs DROP COLUMN between_share; "
                                     "ALTER TABLE runs DROP COLUMN configs_per_minute; "
                                     "DELETE FROM schema_migrations WHERE version > 1; PRAGMA user_version = 1;")
        connection.close()
        self.assertEqual(os.listdir(self.shared), ["results.db"])
        self.lock(folder_too=True)
        before = self.state()
        for command in (["export", "--out", self.path("tuned")], ["report", "--out", self.path("report")]):
            result = self.ktune(*command, "--db", self.db, check=2)
            self.assertIn(self.db, result.stderr)
            self.assertIn("older", result.stderr)
            self.assertIn("copy it to a folder you can write", result.stderr)
        self.assertTrue(self.state() == before, "the refused database was changed")
        # As the message says: a copy the user may write is upgraded and read.
        copy = self.path("copy.db")
        shutil.copyfile(self.db, copy)
        exported = self.ktune_json("export", "--db", copy, "--out", self.path("tuned"))
        self.assertGreaterEqual(exported["exported"][0]["entries"], 1)

    def test_a_command_that_writes_says_the_database_is_read_only(self):
        # ktune takes a file nobody may write as read-only even for root, so this holds either way.
        self.lock(folder_too=False)
        before = self.state()
        result = self.ktune("tune", "-k", "rmsnorm", "-b", "cpu", "--shape", SHAPE, "--budget", "2",
                            "--db", self.db, "--no-export", check=2)
        self.assertIn(self.db + "' is read-only to you", result.stderr)
        self.assertTrue(self.state() == before, "the database was changed")


if __name__ == "__main__":
    harness.main()
