"""`ktune db merge`: databases tuned apart become one that export and bench read, matched by
natural keys (device fingerprint, kernel source, problem), idempotent, sources untouched; bad
sources are bad input (exit 2) and leave the target as it was."""
import hashlib
import os
import shutil
import sqlite3

import harness

FAST = ["--max-seconds-per-config", "0.02"]


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


class DbMerge(harness.KtuneTestCase):
    def path(self, name):
        return os.path.join(self.dir, name)

    def tune(self, db, shape, budget):
        return self.tune_json("-k", "rmsnorm", "-b", "cpu", "--shape", shape, "--strategy", "random",
                               "--budget", str(budget), *FAST, "--db", self.path(db), "--no-export")

    def problems(self, db):
        return {row[0] for row in self.query("SELECT family || ':' || key FROM problems", db=self.path(db))}

    def count(self, db, table, where="1"):
        return self.query(f"SELECT count(*) FROM {table} WHERE {where}", db=self.path(db))[0][0]

    def test_merges_databases_tuned_apart(self):
        self.tune("a.db", "rows=64,cols=256", 4)
        self.tune("b.db", "rows=64,cols=512", 5)
        # b also tuned a's problem: the configs both measured stay measured once.
        self.tune("b.db", "rows=64,cols=256", 3)
        self.ktune_json("bench", "-b", "cpu", "-k", "rmsnorm", "--shape", "rows=64,cols=512", "--repetitions", "2",
                        "--max-seconds-per-repetition", "0.05",
                        "--out", self.path("bench.json"), "--db", self.path("b.db"))
        a_measurements, b_measurements = self.count("a.db", "measurements"), self.count("b.db", "measurements")
        a_keys = {r[0] for r in self.query("SELECT p.key || '|' || config_key FROM measurements m JOIN problems p ON p.id = m.problem_id", db=self.path("a.db"))}
        b_keys = {r[0] for r in self.query("SELECT p.key || '|' || config_key FROM measurements m JOIN problems p ON p.id = m.problem_id", db=self.path("b.db"))}
        shared = len(a_keys & b_keys)
        before = {name: digest(self.path(name)) for name in ("a.db", "b.db")}

        result = self.ktune_json("db", "merge", self.path("a.db"), self.path("b.db"), "--into", self.path("all.db"))
        merged = {entry["source"]: entry for entry in result["merged"]}
        self.assertEqual(merged[self.path("a.db")]["measurements"], a_measurements)
        self.assertEqual(merged[self.path("b.db")]["measurements"], b_measurements - shared)
        self.assertEqual(merged[self.path("b.db")]["measurements_already_present"], shared)
        self.assertEqual(merged[self.path("a.db")]["devices"], 1)
        self.assertEqual(merged[self.path("b.db")]["devices"], 0)  # the same machine: one device
        self.assertGreater(merged[self.path("b.db")]["bench_results"], 0)
        self.assertEqual(self.count("all.db", "measurements"), len(a_keys | b_keys))
        self.assertEqual(self.count("all.db", "runs"), self.count("a.db", "runs") + self.count("b.db", "runs"))
        self.assertEqual(self.problems("all.db"), self.problems("a.db") | self.problems("b.db"))
        self.assertEqual(self.count("all.db", "bench_results"), self.count("b.db", "bench_results"))
        # Every merged row points at rows of the merged database.
        for table, column, parent in (("measurements", "run_id", "runs"), ("measurements", "problem_id", "problems"),
                                      ("runs", "device_id", "devices"), ("bench_results", "bench_run_id", "bench_runs")):
            self.assertEqual(self.count("all.db", table, f"{column} NOT IN (SELECT id FROM {parent})"), 0, table)
        # The sources are only read.
        self.assertEqual(before, {name: digest(self.path(name)) for name in before})

        # Merging again adds nothing; export reads the merged database.
        again = self.ktune_json("db", "merge", self.path("a.db"), self.path("b.db"), "--into", self.path("all.db"))
        for entry in again["merged"]:
            self.assertEqual((entry["measurements"], entry["runs"], entry["bench_results"]), (0, 0, 0), entry)
        exported = self.ktune_json("export", "--db", self.path("all.db"), "--out", self.path("tuned"))
        self.assertEqual(exported["exported"][0]["entries"], 2)

    def test_bad_sources_are_bad_input_and_change_nothing(self):
        self.tune("a.db", "rows=8,cols=64", 2)
        shutil.copy(self.path("a.db"), self.path("target.db"))
        before = self.count("target.db", "measurements")
        with open(self.path("notes.db"), "w") as f:
            f.write("not a database\n")
        sqlite3.connect(self.path("other.db")).execute("CREATE TABLE t (x)").connection.commit()
        for source, words in ((self.path("missing.db"), "no such file"), (self.path("notes.db"), "notes.db"),
                              (self.path("other.db"), "other.db"), (self.path("target.db"), "the one merged into")):
            result = self.ktune("db", "merge", source, "--into", self.path("target.db"), check=2)
            self.assertIn(words, result.stderr)
        self.assertEqual(self.count("target.db", "measurements"), before)
        self.ktune("db", "merge", "--into", self.path("target.db"), check=2)  # no source
        self.ktune("db", "merge", self.path("a.db"), check=2)  # no target
        self.assertIn("ktune db --help", self.ktune("db", check=2).stderr)

    def test_a_symlink_farm_in_the_temporary_directory_cannot_redirect_the_snapshot(self):
        """Another local user pre-creates, in the shared temporary directory, symlinks at every name
        the snapshot might take, pointing at the victim's database; the merge must write none of
        them and leave nothing behind, beside the target or in the temporary directory."""
        self.tune("a.db", "rows=64,cols=256", 4)
        self.tune("victim.db", "rows=64,cols=512", 6)
        victim = digest(self.path("victim.db"))
        shared_tmp = self.path("shared-tmp")
        os.makedirs(shared_tmp)
        os.chmod(shared_tmp, 0o1777)
        first_pid = os.getpid()
        for pid in range(first_pid, first_pid + 3000):  # the names a pid-and-counter scheme would take next
            for counter in range(2):
                os.symlink(self.path("victim.db"), os.path.join(shared_tmp, f"ktune-merge-{pid}-{counter}.db"))
        planted = set(os.listdir(shared_tmp))
        target_dir = self.path("target")
        os.makedirs(target_dir)
        result = self.ktune_json("db", "merge", self.path("a.db"), "--into", os.path.join(target_dir, "into.db"),
                                 env_extra={"TMPDIR": shared_tmp})
        self.assertEqual(len(result["merged"]), 1)
        self.assertEqual(digest(self.path("victim.db")), victim)
        self.assertEqual(set(os.listdir(shared_tmp)), planted)
        # The snapshot's private directory went with the merge.
        self.assertEqual([n for n in os.listdir(target_dir) if not n.startswith("into.db")], [])

    def test_the_snapshot_is_removed_when_the_source_is_bad(self):
        self.tune("a.db", "rows=64,cols=256", 2)
        with open(self.path("bad.db"), "wb") as f:
            f.write(b"SQLite format 3\0" + b"garbage" * 100)
        result = self.ktune("db", "merge", self.path("bad.db"), "--into", self.path("a.db"), check=2)
        self.assertNotIn(".ktune-merge-", result.stderr)  # no advice about a file that is gone
        self.assertEqual([n for n in os.listdir(self.dir) if n.startswith(".ktune-merge-")], [])


if __name__ == "__main__":
    harness.unittest.main(argv=harness.parse_args())
