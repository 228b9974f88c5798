"""A database tampered with while a tune writes to it: replaced by another file, or its -wal and
-shm files deleted. Either made later writes go where no one reads them (a second tuner then lost
the first one's rows) and both tuners exited 0; now the tune stops at its next write, exit 2,
naming what happened, and every row written before is still in the file it opened."""
import json
import os
import shutil
import sqlite3
import subprocess
import time

import harness

TUNE = ["tune", "-k", "rmsnorm", "-b", "cpu", "--shape", "rows=64,cols=4096", "--strategy", "random", "--budget", "200",
        "--max-seconds-per-config", "0.1", "--min-samples", "50", "--no-export"]


class Tampering(harness.KtuneTestCase):
    def rows(self, db):
        with sqlite3.connect(db) as c:
            return c.execute("SELECT count(*) FROM measurements").fetchone()[0]

    def start_and_wait_for_rows(self, rows=2):
        process = subprocess.Popen([harness.ARGS.ktune, *TUNE, "--db", self.db], cwd=self.dir,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                if os.path.exists(self.db) and self.rows(self.db) >= rows:
                    return process
            except sqlite3.OperationalError:
                pass
            time.sleep(0.05)
        process.kill()
        self.fail("the tune wrote no rows")

    def test_a_database_replaced_mid_tune_stops_the_tune(self):
        other = os.path.join(self.dir, "other.db")
        self.ktune("tune", "-k", "rmsnorm", "-b", "cpu", "--shape", "rows=8,cols=64", "--budget", "1",
                   "--max-seconds-per-config", "0.01", "--db", other, "--no-export", check=0)
        process = self.start_and_wait_for_rows()
        moved = os.path.join(self.dir, "moved-away.db")
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(self.db + suffix):
                os.rename(self.db + suffix, moved + suffix)
        shutil.copy(other, self.db)
        _, err = process.communicate(timeout=120)
        self.assertEqual(process.returncode, 2, err)
        self.assertIn("was replaced, moved or deleted", err)
        self.assertEqual(self.rows(self.db), 1)  # the replacement, untouched
        self.assertGreaterEqual(self.rows(moved), 2)  # what was written before stays where it went

    def test_deleted_wal_files_stop_the_tune(self):
        process = self.start_and_wait_for_rows()
        for suffix in ("-wal", "-shm"):
            os.remove(self.db + suffix)
        _, err = process.communicate(timeout=120)
        self.assertEqual(process.returncode, 2, err)
        self.assertIn("write-ahead log", err)


class LockHeld(harness.KtuneTestCase):
    def test_a_lock_held_past_the_timeout_delays_the_writes_and_loses_none(self):
        """Another process holds the write lock for longer than a lock attempt waits (300 ms here,
        30 s by default): the tune waits, saying so, and every result it measured meanwhile is
        written once the lock is free; the run finishes."""
        self.ktune("tune", "-k", "rmsnorm", "-b", "cpu", "--shape", "rows=8,cols=64", "--budget", "1",
                   "--max-seconds-per-config", "0.01", "--db", self.db, "--no-export", check=0)
        process = subprocess.Popen([harness.ARGS.ktune, "tune", "-k", "rmsnorm", "-b", "cpu", "--shape",
                                    "rows=64,cols=1024", "--strategy", "random", "--budget", "12",
                                    "--max-seconds-per-config", "0.2", "--min-samples", "200", "--db", self.db,
                                    "--no-export", "--json"],
                                   cwd=self.dir, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                   env=dict(os.environ, KTUNE_DB_BUSY_TIMEOUT_MS="300"))
        holder = sqlite3.connect(self.db, isolation_level=None, timeout=30)
        deadline = time.time() + 60
        while holder.execute("SELECT count(*) FROM runs").fetchone()[0] < 2 and time.time() < deadline:
            time.sleep(0.02)  # the tune has begun its run
        holder.execute("BEGIN IMMEDIATE")
        time.sleep(4.0)
        holder.execute("ROLLBACK")
        holder.close()
        out, err = process.communicate(timeout=120)
        self.assertEqual(process.returncode, 0, err)
        self.assertIn("is locked by another process", err)
        summary = harness.only_result(self, json.loads(out))
        with sqlite3.connect(self.db) as c:
            stored = c.execute("SELECT count(*) FROM measurements m JOIN problems p ON p.id = m.problem_id "
                               "WHERE p.key LIKE '%1024%'").fetchone()[0]
            statuses = [r[0] for r in c.execute("SELECT status FROM runs ORDER BY id")]
        self.assertEqual(stored, summary["evaluated"])
        self.assertEqual(summary["evaluated"], 12)
        self.assertEqual(statuses[-1], "finished")


class PrivateCache(harness.KtuneTestCase):
    """Without HOME, compiled kernels are cached in <TMPDIR>/ktune-cache-<uid>: a folder another
    user could prepare (writable by others, or a link to theirs) is refused, never used."""

    def compile_without_home(self, tmpdir):
        env = {k: v for k, v in os.environ.items() if k not in ("HOME", "XDG_CACHE_HOME", "KTUNE_CACHE_DIR")}
        env["TMPDIR"] = tmpdir
        spec = os.path.join(harness.ARGS.source_dir, "tests", "data", "t1", "axpy_in_place", "axpy_in_place_T1.json")
        return subprocess.run([harness.ARGS.ktune, "tune", "--t1", spec, "--compile-only", "--arch", "sm_90a"],
                              cwd=self.dir, capture_output=True, text=True, env=env, timeout=300)

    def test_a_prepared_cache_folder_is_refused(self):
        if not any(b["backend"] == "cuda" and b["built"] for b in self.ktune_json("devices")["backends"]):
            self.skipTest("this build has no CUDA backend")
        shared = os.path.join(self.dir, "shared-tmp")
        os.makedirs(shared)
        planted = os.path.join(shared, f"ktune-cache-{os.getuid()}")
        os.makedirs(planted)
        os.chmod(planted, 0o777)
        result = self.compile_without_home(shared)
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn("not a private folder", result.stderr)
        os.rmdir(planted)
        os.symlink(self.dir, planted)
        self.assertEqual(self.compile_without_home(shared).returncode, 2)
        os.unlink(planted)
        fresh = self.compile_without_home(shared)
        self.assertEqual(fresh.returncode, 0, fresh.stderr)
        self.assertEqual(os.stat(planted).st_mode & 0o777, 0o700)


class HandEditedRows(harness.KtuneTestCase):
    """Rows edited by hand (or corrupted) are refused by export, naming the row, instead of being
    exported as garbage: a dim of 1e300 came out as INT64_MIN, a thread count of 2.5 as a double."""

    def setUp(self):
        super().setUp()
        self.ktune("tune", "-k", "rmsnorm", "-b", "cpu", "--shape", "rows=16,cols=256", "--budget", "2",
                   "--max-seconds-per-config", "0.01", "--db", self.db, "--no-export", check=0)

    def export(self):
        return self.ktune("export", "--db", self.db, "--out", os.path.join(self.dir, "tuned"), check=2)

    def test_a_dim_that_is_not_an_integer(self):
        with sqlite3.connect(self.db) as c:
            c.execute("""UPDATE problems SET dims = '[["rows",1e300],["cols",256]]'""")
        self.assertIn("not an integer extent", self.export().stderr)

    def test_a_real_where_the_parameter_takes_integers(self):
        with sqlite3.connect(self.db) as c:
            config = json.loads(c.execute("SELECT config FROM measurements LIMIT 1").fetchone()[0])
            config["threads"] = 2.5
            c.execute("UPDATE measurements SET config = ?", (json.dumps(config),))
        result = self.export()
        self.assertIn("threads = 2.5", result.stderr)
        self.assertIn("takes integers", result.stderr)


class TooLargeProblems(harness.KtuneTestCase):
    def test_a_t1_problem_size_too_large_is_not_blamed_on_shape(self):
        folder = os.path.join(self.dir, "axpy")
        shutil.copytree(os.path.join(harness.ARGS.source_dir, "tests", "data", "t1", "axpy_in_place"), folder)
        spec_file = os.path.join(folder, "axpy_in_place_T1.json")
        with open(spec_file) as f:
            spec = json.load(f)
        spec["KernelSpecification"]["ProblemSize"] = [2 ** 45]
        with open(spec_file, "w") as f:
            json.dump(spec, f)
        if not any(b["backend"] == "cuda" and b["built"] for b in self.ktune_json("devices")["backends"]):
            self.skipTest("this build has no CUDA backend")
        run = self.ktune("tune", "--t1", spec_file, "--compile-only", "--arch", "sm_90a", check=2)
        self.assertIn("ProblemSize", run.stderr)
        self.assertNotIn("--shape", run.stderr)


class MisleadingMessages(harness.KtuneTestCase):
    def test_a_bad_t1_spec_from_the_environment_names_the_variable(self):
        """A tune passes its spec to the processes it starts in KTUNE_T1_SPEC; when that spec
        cannot be read, the error names the variable, not a --t1 nobody typed."""
        result = self.ktune("space", "-k", "rmsnorm", "-b", "cpu",
                            env_extra={"KTUNE_T1_SPEC": os.path.join(self.dir, "gone_T1.json")}, check=2)
        self.assertIn("KTUNE_T1_SPEC", result.stderr)
        self.assertNotIn("--t1", result.stderr)


if __name__ == "__main__":
    harness.main()
