"""Every error path a user can reach says what happened and what to do, and exits with the
contract's code (0 ok, 1 a check failed, 2 bad input or usage, 3 backend or device absent).

A table of mistakes, per command, each run twice: plain, where stderr must name the bad value,
file or line, and with --json, where stdout must be one JSON document with "error" (naming the
same thing) and "exit_code" equal to the process's exit code. No case may leave anything behind
in the directory it ran in (no new database, no headers, no -wal/-shm files), and the database
files given to it stay byte for byte as they were.

test_bad_input.py already covers unknown kernel/backend/strategy/precision names, unknown dims,
rows=0 / rows=abc / rows256, the numeric option ranges, absent backends on stderr, malformed and
mismatched search spaces, and text/truncated databases; they are not repeated here.
"""
import json
import os
import unittest.mock
import shutil
import sqlite3
import sys

import harness

KTUNE_APPLICATION_ID = 0x6B74756E  # PRAGMA application_id of a ktune database (db/store_classify.hpp)


class ErrorPaths(harness.KtuneTestCase):
    def setUp(self):
        super().setUp()
        d = self.dir
        self.write("space_bad.json", '{\n  "family": "rmsnorm",\n  "backend": "cpu",\n  "parameters": [\n}\n')
        self.write("t1_bad.json", '{\n  "ConfigurationSpace": {\n    "TuningParameters": [,]\n  }\n}\n')
        self.write("t1_ok.json", json.dumps({"ConfigurationSpace": {"TuningParameters": [
            {"Name": "x", "Type": "int", "Values": "[1, 2]"}], "Conditions": []}}))
        self.write("bench_bad.json", '{\n  "benchmarks": [\n    {"name": "BM_a",\n    }\n  ]\n}\n')
        self.write("bench.json", json.dumps({"context": {}, "benchmarks": [
            {"name": "BM_a", "run_type": "iteration", "real_time": 10.0, "cpu_time": 10.0, "time_unit": "ns",
             "iterations": 1}]}))
        self.write("a_file", "not a directory\n")
        os.mkdir(os.path.join(d, "a_dir"))
        with open(os.path.join(harness.ARGS.source_dir, "search_spaces", "rmsnorm.cpu.json")) as f:
            space = json.load(f)
        space["constraints"].append({"name": "impossible", "expr": "threads > 1000000000"})
        self.write("space_impossible.json", json.dumps(space))
        # A ktune database of a schema version from the future (how db/store_open.cpp marks versions),
        # someone else's SQLite file, and an empty one (a new database: no results to export).
        connection = sqlite3.connect(os.path.join(d, "newer.db"))
        connection.execute(f"PRAGMA application_id = {KTUNE_APPLICATION_ID}")
        connection.execute("PRAGMA user_version = 999")
        connection.execute("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT, applied_at TEXT)")
        connection.execute("INSERT INTO schema_migrations VALUES (999, 'future', '2099-01-01')")
        connection.commit()
        connection.close()
        connection = sqlite3.connect(os.path.join(d, "other.db"))
        connection.execute("CREATE TABLE notes (text TEXT)")
        connection.commit()
        connection.close()
        self.write("empty_ktune.db", "")
        self.snapshot = self.contents()

    def write(self, name, text):
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def contents(self):
        """Every path under the scratch directory with its bytes (files) or None (directories)."""
        found = {}
        for root, dirs, files in os.walk(self.dir):
            for name in dirs:
                found[os.path.relpath(os.path.join(root, name), self.dir)] = None
            for name in files:
                path = os.path.join(root, name)
                try:
                    with open(path, "rb") as f:
                        found[os.path.relpath(path, self.dir)] = f.read()
                except PermissionError:
                    found[os.path.relpath(path, self.dir)] = "unreadable"
        return found

    def check_cases(self, cases):
        """cases: (args, exit code, fragments the message must contain)."""
        for args, code, *fragments in cases:
            for as_json in (False, True):
                command = list(args) + (["--json"] if as_json else [])
                with self.subTest(command=" ".join(command)):
                    try:
                        result = self.ktune(*command, timeout=60)
                    finally:
                        after = self.contents()
                        self.restore(after)  # so that one case's leftovers do not fail the next
                    context = f"ktune {' '.join(command)}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}"
                    self.assertEqual(sorted(after), sorted(self.snapshot), f"left behind or removed: {context}")
                    self.assertEqual(after, self.snapshot, f"a file was modified: {context}")
                    self.assertEqual(result.returncode, code, context)
                    self.assertTrue(result.stderr.startswith("ktune: error: "), context)
                    for fragment in fragments:
                        self.assertIn(fragment, result.stderr, context)
                    if as_json:
                        document = json.loads(result.stdout)
                        self.assertEqual(document["exit_code"], code, context)
                        for fragment in fragments:
                            self.assertIn(fragment, document["error"], context)

    def restore(self, after):
        for path in sorted(set(after) - set(self.snapshot), reverse=True):
            full = os.path.join(self.dir, path)
            if os.path.isdir(full) and not os.path.islink(full):
                shutil.rmtree(full)
            else:
                os.remove(full)
        for path, data in self.snapshot.items():
            if isinstance(data, bytes) and after.get(path) != data:
                with open(os.path.join(self.dir, path), "wb") as f:
                    f.write(data)

    def test_global_usage(self):
        self.check_cases([
            ([], 2, "no command given", "valid commands: ", "tune", "compare", "ktune --help"),
            (["frob"], 2, "unknown command 'frob'", "valid commands: ", "tune"),
            (["tune", "--frob"], 2, "--frob", "ktune tune --help"),
            (["list", "extra"], 2, "extra", "ktune list --help"),
            (["devices", "--kernel", "rmsnorm"], 2, "--kernel", "ktune devices --help"),
        ])
        # An option missing its value, last on the line. With --json after it, "--json" is taken
        # as the value; the error still comes as JSON.
        for option, fragment in (("--budget", "'--json' is not a whole number"), ("--kernel", "unknown kernel '--json'")):
            result = self.ktune("tune", option, check=2)
            self.assertIn(f"{option} needs a value", result.stderr)
            self.assertIn("ktune tune --help", result.stderr)
            result = self.ktune("tune", option, "--json", check=2)
            self.assertIn(fragment, result.stderr)
            self.assertEqual(json.loads(result.stdout)["exit_code"], 2)

    def test_tune_values(self):
        tune = ["tune", "--kernel", "rmsnorm"]
        self.check_cases([
            (tune + ["--shape", "rows=99999999999999999999"], 2, "rows=99999999999999999999 is too large"),
            (tune + ["--shape", "rows=-4"], 2, "rows=-4 must be at least 1"),
            (tune + ["--shape", "rows=2.5"], 2, "rows=2.5 is not an integer"),
            (tune + ["--shape", "rows=4,,cols=64"], 2, "expected dim=value pairs", "'rows=4,,cols=64'"),
            (tune + ["--shape", "rows=4,rows=8"], 2, "rows is given twice"),
            (tune + ["--shape", ""], 2, "--shape: is empty", "leave out --shape"),
            (tune + ["--backend", ""], 2, "--backend: is empty", "cpu, cuda, hip or vulkan"),
            (tune + ["--budget", "many"], 2, "--budget: 'many' is not a whole number"),
            (tune + ["--time-limit", "-1"], 2, "--time-limit: '-1' is not a number of seconds above 0"),
            (tune + ["--time-limit", "5x"], 2, "--time-limit: '5x' is not a number of seconds"),
            (tune + ["--config-timeout", "abc"], 2, "--config-timeout: 'abc'"),
            (tune + ["--seed", "-1"], 2, "--seed: '-1' is not a whole number"),
            (tune + ["--min-samples", "many"], 2, "--min-samples: 'many'"),
            (tune + ["--max-noise", "2"], 2, "--max-noise: '2' is not a fraction from 0 to 1"),
        ])

    def test_tune_contradictions(self):
        tune = ["tune", "--kernel", "rmsnorm"]
        rmsnorm_space = os.path.join(harness.ARGS.source_dir, "search_spaces", "rmsnorm.cpu.json")
        self.check_cases([
            (tune + ["--compile-only"], 2, "--compile-only needs --arch"),
            (tune + ["--arch", "sm_90a", "--budget", "1"], 2, "--arch sm_90a applies only with --compile-only"),
            (tune + ["--backend", "cpu", "--compile-only", "--arch", "sm_90a"], 2,
             "the cpu backend has no compile step", "--backend cuda"),
            (tune + ["--backend", "cuda", "--compile-only", "--arch", "sm_xx"], 2,
             "'sm_xx' is not a CUDA architecture", "sm_90a"),
            (["tune", "--space", rmsnorm_space, "--budget", "1"], 2, f"--space {rmsnorm_space}",
             "rmsnorm, swiglu", "exactly one --kernel"),
        ])

    def test_tune_files(self):
        tune = ["tune", "--kernel", "rmsnorm", "--shape", "rows=4,cols=64", "--budget", "1"]
        cases = [
            (tune + ["--space", "missing.json"], 2, "missing.json: cannot open", "No such file"),
            (tune + ["--space", "a_dir"], 2, "a_dir: is a directory"),
            (tune + ["--space", ""], 2, "--space: is empty"),
            # Refused before anything is measured: no database is created.
            (tune + ["--space", "space_impossible.json"], 2, "space_impossible.json: no config satisfies",
             "--shape"),
            (["tune", "--kernel", "rmsnorm", "--shape", "rows=1000000,cols=1000000", "--budget", "1"], 2,
             "GiB", "smaller --shape"),
            (tune + ["--export-dir", "a_file"], 2, "--export-dir 'a_file' is a file", "--no-export"),
            (tune + ["--export-dir", "a_file/headers"], 2, "--export-dir 'a_file/headers' cannot be created",
             "'a_file' is a file"),
            (tune + ["--export-dir", ""], 2, "--export-dir: is empty"),
            (tune + ["--db", "a_dir"], 2, "'a_dir' is a directory", "a_dir/ktune.db"),
            (tune + ["--db", "other.db"], 2, "'other.db'", "not a ktune database"),
            (tune + ["--db", "newer.db"], 2, "'newer.db'", "newer ktune", "schema version 999"),
            (tune + ["--db", "no_such_dir/ktune.db"], 2, "'no_such_dir' does not exist"),
        ]
        if sys.platform.startswith("linux") and os.path.isdir("/proc"):
            cases.append((tune + ["--db", "/proc/ktune-test.db", "--no-export"], 2, "'/proc/ktune-test.db'",
                          "writable"))
        if os.geteuid() != 0:  # root reads through permissions
            os.chmod(self.write("unreadable.json", "{}"), 0)
            self.snapshot = self.contents()
            cases.append((tune + ["--space", "unreadable.json"], 2, "unreadable.json: cannot open",
                          "Permission denied"))
        self.check_cases(cases)

    def test_absent_backends_in_json(self):
        backends = {b["backend"]: b for b in self.ktune_json("devices")["backends"]}
        cases = []
        for name in ("cuda", "hip", "vulkan"):
            if backends[name]["status"] == "available":
                continue
            absent = {"cuda": "no CUDA device", "hip": "no HIP device was found"}
            expected = absent.get(name, "") if backends[name]["built"] else f"the {name} backend is not part of this build"
            cases.append((["tune", "--kernel", "rmsnorm", "--backend", name], 3, expected))
            cases.append((["space", "--kernel", "rmsnorm", "--backend", name], 3, expected))
        self.check_cases(cases)

    def test_space(self):
        rmsnorm_space = os.path.join(harness.ARGS.source_dir, "search_spaces", "rmsnorm.cpu.json")
        cases = [
            (["space"], 2, "needs --kernel", "--t1 FILE"),
            (["space", "--t1", "missing.json"], 2, "missing.json: cannot open", "--t1"),
            (["space", "--t1", "a_dir"], 2, "a_dir: is a directory"),
            (["space", "--t1", "t1_bad.json"], 2, "t1_bad.json: not valid JSON", "line 3"),
            (["space", "--t1", ""], 2, "--t1: is empty"),
            (["space", "--t1", "t1_ok.json", "--kernel", "rmsnorm"], 2, "--t1 t1_ok.json", "leave out --kernel"),
            (["space", "--kernel", "rmsnorm", "--space", "a_dir"], 2, "a_dir: is a directory"),
            (["space", "--kernel", "rmsnorm", "--space", "space_bad.json"], 2, "space_bad.json", "line 5"),
            (["space", "--kernel", "swiglu", "--space", rmsnorm_space], 2, "describes rmsnorm on cpu, not swiglu"),
            (["space", "--kernel", "rmsnorm", "--arch", "sm_90a"], 2, "--arch sm_90a", "--backend cuda"),
            (["space", "--kernel", "rmsnorm", "--shape", "rows=99999999999999999999"], 2, "too large"),
            (["space", "--kernel", "rmsnorm", "--precision", "fp13"], 2, "unknown precision 'fp13'", "fp32"),
        ]
        backends = {b["backend"]: b for b in self.ktune_json("devices")["backends"]}
        if backends["cuda"]["built"]:  # nominal CUDA devices exist without a GPU
            cases.append((["space", "--kernel", "rmsnorm", "--backend", "cuda", "--arch", "sm_xx"], 2,
                          "'sm_xx' is not a CUDA architecture"))
        self.check_cases(cases)

    @unittest.mock.patch.dict(os.environ, {"KTUNE_ENABLE_TEST_FAMILIES": "1"})
    def test_export(self):
        self.check_cases([
            (["export", "--db", "a_dir"], 2, "'a_dir' is a directory"),
            (["export", "--db", "newer.db"], 2, "'newer.db'", "newer ktune"),
            (["export", "--db", "other.db"], 2, "'other.db'", "not a ktune database"),
            (["export", "--db", "empty_ktune.db"], 2, "empty_ktune.db: is empty", "ktune tune"),
            (["export", "--db", "empty_ktune.db", "--backend", "opencl"], 2, "unknown backend 'opencl'",
             "cpu, cuda, hip, vulkan"),
            # The fault-injection family (test-only) has CPU and CUDA spaces, no Vulkan one.
            (["export", "--db", "empty_ktune.db", "--kernel", "fault_injection", "--backend", "vulkan"], 2,
             "'fault_injection' has no search space for the vulkan backend", "ktune list"),
            (["export", "--db", "empty_ktune.db", "--out", "a_file"], 2, "--out 'a_file' is a file"),
            (["export", "--db", "empty_ktune.db", "--kernel", "nope"], 2, "unknown kernel 'nope'", "rmsnorm"),
        ])

    def test_compare(self):
        self.check_cases([
            (["compare"], 2, "BASE.json (Google Benchmark JSON of the baseline) is missing",
             "usage: ktune compare BASE.json NEW.json"),
            (["compare", "bench.json"], 2, "NEW.json (Google Benchmark JSON to check against it) is missing"),
            (["compare", "", "bench.json"], 2, "is empty"),
            (["compare", "bench.json", "missing.json"], 2, "missing.json: no such file"),
            (["compare", "a_dir", "bench.json"], 2, "a_dir: is a directory"),
            (["compare", "bench.json", "bench_bad.json"], 2, "bench_bad.json: not valid JSON", "line 4"),
            (["compare", "bench.json", "bench.json", "--threshold", "5x"], 2, "--threshold: '5x'"),
            (["compare", "bench.json", "bench.json", "--alpha", "abc"], 2, "--alpha: 'abc'", "0.05"),
            (["compare", "bench.json", "bench.json", "--db", "x.db"], 2, "--db", "ktune compare --help"),
        ])


if __name__ == "__main__":
    harness.main()
