"""Shared plumbing of the integration tests: they run the real ktune binary in a scratch
directory and read what it wrote (stdout JSON, the SQLite database, generated headers).

Each test file is a unittest module run by ctest as
    python3 test_x.py --ktune PATH --source-dir DIR --cxx COMPILER
"""
import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import unittest

ARGS = None


def parse_args():
    global ARGS
    parser = argparse.ArgumentParser()
    parser.add_argument("--ktune", required=True)
    parser.add_argument("--source-dir", required=True)
    parser.add_argument("--cxx", default="c++")
    ARGS, rest = parser.parse_known_args()
    return [sys.argv[0]] + rest


class KtuneTestCase(unittest.TestCase):
    """Gives each test a scratch directory and helpers to run ktune in it."""

    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="ktune-test-")
        self.dir = self._tmp.name
        self.db = os.path.join(self.dir, "ktune.db")

    def tearDown(self):
        self._tmp.cleanup()

    def ktune(self, *args, env_extra=None, timeout=300, check=None):
        """Runs ktune; returns the CompletedProcess. `check` asserts the exit code."""
        env = dict(os.environ)
        env.update(env_extra or {})
        result = subprocess.run([ARGS.ktune, *args], cwd=self.dir, capture_output=True, text=True,
                                timeout=timeout, env=env)
        if check is not None:
            self.assertEqual(result.returncode, check,
                             f"ktune {' '.join(args)} exited {result.returncode}\n"
                             f"stdout:\n{result.stdout}\nstderr:\n{result.stderr}")
        return result

    def ktune_json(self, *args, **kwargs):
        result = self.ktune(*args, "--json", check=kwargs.pop("check", 0), **kwargs)
        return json.loads(result.stdout)

    def tune_json(self, *args, **kwargs):
        """`ktune tune ARGS --json`'s one result: its document's only entry of "results" (an error
        document, which has no results, as it is)."""
        return only_result(self, self.ktune_json("tune", *args, **kwargs))

    def query(self, sql, params=(), db=None):
        with sqlite3.connect(db or self.db) as connection:
            return connection.execute(sql, params).fetchall()


def only_result(test, document):
    """The single entry of a `tune --json` document's "results" (an error document as it is)."""
    if "results" not in document:
        return document
    test.assertEqual(len(document["results"]), 1, f"expected one result: {json.dumps(document)[:2000]}")
    return document["results"][0]


def large_database(test, path, rows):
    """A real ktune database at `path` (a short CPU tune) padded with `rows` synthetic
    measurements of the same run: a merge source large enough to take seconds."""
    test.ktune("tune", "-k", "rmsnorm", "-b", "cpu", "--shape", "rows=64,cols=256", "--budget", "2",
               "--max-seconds-per-config", "0.01", "--db", path, "--no-export", check=0)
    with sqlite3.connect(path) as c:
        row = c.execute("SELECT run_id, device_id, kernel_id, problem_id, config, outcome FROM measurements").fetchone()
        c.execute(f"""WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {int(rows)})
                      INSERT INTO measurements (run_id, device_id, kernel_id, problem_id, config_key, config, outcome,
                                                message, median_ns, sample_count, samples, environment, measured_at)
                      SELECT ?, ?, ?, ?, 'synthetic-' || i, ?, ?, '', 1000.0 + i, 3, '[]', '{{}}', '2026-01-01'
                      FROM n""", row)
        return c.execute("SELECT count(*) FROM measurements").fetchone()[0]


def main():
    argv = parse_args()
    unittest.main(argv=argv, verbosity=2)
