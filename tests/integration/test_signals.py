"""Signals and limits (reliability): every command ends within a second of the first SIGINT or
SIGTERM with exit 128 + the signal, keeping what it had: a tune records its run as interrupted,
a merge rolls back and removes its snapshot, the others end at once; a second signal ends ktune
at once. A space too large for memory, a KernelFile or Chart.js that never ends (/dev/zero) are
refused as bad input (exit 2) instead of exhausting the machine's memory."""
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import time

import harness

SHARED = os.path.join("..", "shared", "data", "kernel_tuner_caches")
AXPY = os.path.join("tests", "data", "t1", "axpy_in_place")
# Generous for a loaded 2-core CI machine; the contract is one second.
STOP_SECONDS = 2.0


def axpy_spec(directory, extra_parameters, values):
    """tests/data/t1/axpy_in_place copied into `directory`, with `extra_parameters` more
    parameters of `values` values each; returns the spec's path."""
    folder = os.path.join(directory, "axpy")
    shutil.copytree(os.path.join(harness.ARGS.source_dir, AXPY), folder)
    path = os.path.join(folder, "axpy_in_place_T1.json")
    with open(path) as f:
        spec = json.load(f)
    for i in range(extra_parameters):
        spec["ConfigurationSpace"]["TuningParameters"].append(
            {"Name": f"extra_{i}", "Type": "int", "Values": f"list(range(1, {values + 1}))", "Default": 1})
    with open(path, "w") as f:
        json.dump(spec, f)
    return path


class Signals(harness.KtuneTestCase):
    def start(self, *args, env_extra=None):
        env = dict(os.environ, **(env_extra or {}))
        return subprocess.Popen([harness.ARGS.ktune, *args], cwd=self.dir, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=env)

    def stop(self, process, sig, after):
        """Sends `sig` after `after` seconds (the command must still be running then); returns
        (exit code, seconds from the signal to the exit, stdout, stderr)."""
        time.sleep(after)
        self.assertIsNone(process.poll(), "the command ended before the signal: make its work longer")
        process.send_signal(sig)
        sent = time.time()
        out, err = process.communicate(timeout=60)
        return process.returncode, time.time() - sent, out, err

    def test_replay_ends_at_sigterm(self):
        cache = os.path.join(harness.ARGS.source_dir, SHARED, "convolution_milo_A4000.json.gz")
        process = self.start("replay", "--cache", cache, "--budget", "40", "--repeats", "100000")
        code, seconds, _, _ = self.stop(process, signal.SIGTERM, 1.0)
        self.assertEqual(code, 143)
        self.assertLess(seconds, STOP_SECONDS)

    def test_space_ends_at_sigint(self):
        spec = axpy_spec(self.dir, 5, 20)  # 18 x 20^5 = 5.8e7 configs: seconds to enumerate
        process = self.start("space", "--t1", spec, "--json")
        code, seconds, _, _ = self.stop(process, signal.SIGINT, 0.5)
        self.assertEqual(code, 130)
        self.assertLess(seconds, STOP_SECONDS)

    def test_merge_ends_at_sigint_rolled_back_and_cleaned_up(self):
        source = os.path.join(self.dir, "source.db")
        harness.large_database(self, source, 600000)
        target_dir = os.path.join(self.dir, "target")
        os.makedirs(target_dir)
        target = os.path.join(target_dir, "into.db")
        process = self.start("db", "merge", source, "--into", target)
        code, seconds, _, err = self.stop(process, signal.SIGINT, 0.5)
        self.assertEqual(code, 130, err)
        self.assertLess(seconds, STOP_SECONDS)
        self.assertIn("nothing of", err)
        with sqlite3.connect(target) as c:
            self.assertEqual(c.execute("SELECT count(*) FROM measurements").fetchone()[0], 0)
            self.assertEqual(c.execute("PRAGMA integrity_check").fetchone()[0], "ok")
        self.assertEqual([n for n in os.listdir(target_dir) if not n.startswith("into.db")], [])

    def test_tune_ends_at_sigterm_as_an_interrupted_run(self):
        process = self.start("tune", "-k", "gemm", "-b", "cpu", "--shape", "m=384,n=384,k=384", "--time-limit", "60",
                             "--max-seconds-per-config", "0.05", "--db", self.db, "--no-export", "--json")
        code, seconds, out, err = self.stop(process, signal.SIGTERM, 3.0)  # past the first config's set-up
        self.assertEqual(code, 143, err)
        self.assertLess(seconds, STOP_SECONDS)
        self.assertTrue(harness.only_result(self, json.loads(out))["interrupted"])
        self.assertEqual(self.query("SELECT status FROM runs"), [("interrupted",)])

    def test_a_tune_whose_config_takes_long_stops_within_a_second_and_drops_it(self):
        # Each config would take 30 s of samples: the one in flight at the signal is dropped after
        # the grace period, not recorded, and a rerun measures it.
        args = ("tune", "-k", "rmsnorm", "-b", "cpu", "--shape", "rows=1024,cols=4096", "--budget", "1",
                "--max-seconds-per-config", "30", "--min-samples", "1000000", "--db", self.db, "--no-export")
        process = self.start(*args, "--json")
        code, seconds, out, err = self.stop(process, signal.SIGTERM, 2.5)  # well into its first config
        self.assertEqual(code, 143, err)
        self.assertLess(seconds, STOP_SECONDS)
        result = harness.only_result(self, json.loads(out))
        self.assertTrue(result["interrupted"])
        self.assertEqual((result["evaluated"], result["dropped_at_stop"]), (0, 1))
        self.assertEqual(self.query("SELECT count(*) FROM measurements"), [(0,)])
        self.assertEqual(self.query("SELECT count(*) FROM claims"), [(0,)])
        self.assertEqual(self.query("SELECT status FROM runs"), [("interrupted",)])
        # The human summary says so too.
        process = self.start(*args)
        code, seconds, out, err = self.stop(process, signal.SIGINT, 2.5)
        self.assertEqual(code, 130, err)
        self.assertLess(seconds, STOP_SECONDS)
        self.assertIn("1 config in flight at the stop", out)
        # The rerun measures the dropped config (briefly now).
        rerun = self.ktune_json("tune", "-k", "rmsnorm", "-b", "cpu", "--shape", "rows=1024,cols=4096", "--budget", "1",
                                "--max-seconds-per-config", "0.05", "--db", self.db, "--no-export", "--json")
        self.assertEqual(harness.only_result(self, rerun)["evaluated"], 1)

    def test_a_bench_whose_repetition_takes_long_stops_within_a_second(self):
        out_file = os.path.join(self.dir, "bench.json")
        process = self.start("bench", "-b", "cpu", "-k", "rmsnorm", "--shape", "rows=1024,cols=4096", "--repetitions",
                             "3", "--max-seconds-per-repetition", "30", "--min-samples", "1000000", "--no-baseline", "--db", self.db,
                             "--out", out_file)
        code, seconds, _, err = self.stop(process, signal.SIGTERM, 2.5)
        self.assertEqual(code, 143, err)
        self.assertLess(seconds, STOP_SECONDS)
        with open(out_file) as f:
            self.assertEqual(json.load(f)["benchmarks"], [])  # the repetition cut short is not kept
        self.assertEqual(self.query("SELECT status FROM bench_runs"), [("interrupted",)])

    def test_a_second_signal_ends_a_tune_at_once(self):
        process = self.start("tune", "-k", "rmsnorm", "-b", "cpu", "--shape", "rows=64,cols=4096", "--budget", "500",
                             "--max-seconds-per-config", "1", "--min-samples", "100000", "--db", self.db, "--no-export")
        time.sleep(2.0)
        process.send_signal(signal.SIGINT)
        time.sleep(0.2)
        process.send_signal(signal.SIGINT)
        sent = time.time()
        process.communicate(timeout=60)
        self.assertEqual(process.returncode, 130)
        self.assertLess(time.time() - sent, STOP_SECONDS)


class Limits(harness.KtuneTestCase):
    def test_a_space_too_large_for_memory_is_refused(self):
        spec = os.path.join(harness.ARGS.source_dir, AXPY, "axpy_in_place_T1.json")
        small = self.ktune_json("space", "--t1", spec, "--json", env_extra={"KTUNE_MAX_SPACE_MIB": "1"})
        self.assertEqual(small["valid"], 18)
        big = axpy_spec(self.dir, 3, 40)  # 18 x 40^3 = 1.15e6 configs of 6 parameters: 27 MB
        refused = self.ktune("space", "--t1", big, env_extra={"KTUNE_MAX_SPACE_MIB": "8"}, check=2)
        self.assertIn("KTUNE_MAX_SPACE_MIB", refused.stderr)
        self.assertIn("axpy_in_place_T1.json", refused.stderr)
        self.ktune("space", "--t1", big, env_extra={"KTUNE_MAX_SPACE_MIB": "lots"}, check=2)

    def test_a_kernel_file_that_never_ends_is_refused(self):
        folder = os.path.join(self.dir, "axpy")
        shutil.copytree(os.path.join(harness.ARGS.source_dir, AXPY), folder)
        path = os.path.join(folder, "axpy_in_place_T1.json")
        with open(path) as f:
            spec = json.load(f)
        spec["KernelSpecification"]["KernelFile"] = "/dev/zero"
        with open(path, "w") as f:
            json.dump(spec, f)
        result = self.ktune("tune", "--t1", path, "--compile-only", "--arch", "sm_90a", check=2, timeout=60)
        self.assertIn("/dev/zero", result.stderr)
        self.assertIn("MiB", result.stderr)

    def test_a_chartjs_that_never_ends_is_refused(self):
        self.ktune("tune", "-k", "rmsnorm", "-b", "cpu", "--shape", "rows=8,cols=64", "--budget", "2",
                   "--max-seconds-per-config", "0.01", "--db", self.db, "--no-export", check=0)
        result = self.ktune("report", "--db", self.db, "--out", os.path.join(self.dir, "report"),
                            env_extra={"KTUNE_CHARTJS": "/dev/zero"}, timeout=60)
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn("/dev/zero", result.stderr)


def children(pid):
    """The processes `pid` started, from any of its threads (the tune forks its workers from the
    device threads)."""
    found = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children") as f:
                found += [int(c) for c in f.read().split()]
        except OSError:
            pass
    return found


class SetupTimeout(harness.KtuneTestCase):
    def test_a_worker_stopped_while_preparing_fails_the_tune_at_the_setup_timeout(self):
        """A worker frozen (SIGSTOP) while it prepares a large problem's float64 reference held the
        tune for an hour; it now fails at --setup-timeout, naming it."""
        process = subprocess.Popen([harness.ARGS.ktune, "tune", "-k", "rmsnorm", "-b", "cpu", "--shape",
                                    "rows=4096,cols=16384", "--budget", "3", "--setup-timeout", "3", "--db", self.db,
                                    "--no-export"], cwd=self.dir, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   text=True)
        worker = None
        deadline = time.time() + 30
        while worker is None and time.time() < deadline:
            found = children(process.pid)
            worker = found[0] if found else None
            time.sleep(0.02)
        self.assertIsNotNone(worker, "no worker appeared")
        time.sleep(0.5)  # past its start, into the preparation of 6.7e7 elements (seconds)
        os.kill(worker, signal.SIGSTOP)
        stopped = time.time()
        _, err = process.communicate(timeout=120)
        self.assertEqual(process.returncode, 1, err)
        self.assertIn("--setup-timeout", err)
        self.assertLess(time.time() - stopped, 20)


class ExternalKill(harness.KtuneTestCase):
    def test_a_worker_killed_from_outside_is_retried_not_blacklisted(self):
        """kill -9 of the worker by someone else (or the OOM killer) is not the config's fault: the
        config is evaluated again in a fresh worker and recorded ok, saying so."""
        process = subprocess.Popen([harness.ARGS.ktune, "tune", "-k", "rmsnorm", "-b", "cpu", "--shape",
                                    "rows=256,cols=4096", "--budget", "2", "--max-seconds-per-config", "1.5",
                                    "--min-samples", "100000", "--db", self.db, "--no-export", "--json"],
                                   cwd=self.dir, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 30
        worker = None
        while worker is None and time.time() < deadline:
            found = children(process.pid)
            worker = found[0] if found else None
            time.sleep(0.02)
        self.assertIsNotNone(worker, "no worker appeared")
        time.sleep(0.8)  # measuring the first config by now
        os.kill(worker, signal.SIGKILL)
        out, err = process.communicate(timeout=120)
        self.assertEqual(process.returncode, 0, err)
        self.assertEqual(harness.only_result(self, json.loads(out))["outcomes"], {"ok": 2})
        rows = self.query("SELECT outcome, message, environment FROM measurements")
        retried = [json.loads(environment).get("retried_after_signal") for _, _, environment in rows]
        self.assertIn(9, retried, rows)
        self.assertTrue(any("killed by signal 9" in message for _, message, _ in rows))


if __name__ == "__main__":
    harness.main()
