"""kill -9 of the tuner at random moments: every rerun resumes, the database stays intact, and no
finished config is lost or measured twice."""
import json
import os
import random
import signal
import sqlite3
import subprocess
import time

import harness

SHAPE = "rows=512,cols=4096"
# Long enough per config that kills land mid-measurement as well as between configs.
ARGS = ["tune", "--kernel", "rmsnorm", "--backend", "cpu", "--shape", SHAPE, "--strategy", "random",
        "--seed", "3", "--no-export", "--max-seconds-per-config", "0.1", "--min-samples", "40"]


class KillAndResume(harness.KtuneTestCase):
    def measured(self):
        if not os.path.exists(self.db):
            return set()
        try:
            rows = self.query("SELECT config FROM measurements")
        except sqlite3.OperationalError:  # the tuner has created the file but not its tables yet
            return set()
        configs = [r[0] for r in rows]
        self.assertEqual(len(configs), len(set(configs)), "a config was stored twice")
        return set(configs)

    def test_kill_minus_nine_loop(self):
        rng = random.Random(2026)
        budget = 80
        seen = set()
        trials = 10
        for trial in range(trials):
            process = subprocess.Popen([harness.ARGS.ktune, *ARGS, "--budget", str(budget), "--db", self.db],
                                       cwd=self.dir, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                       start_new_session=True)
            time.sleep(rng.uniform(0.05, 0.6))
            os.killpg(process.pid, signal.SIGKILL)  # the tuner and its worker, like a lost machine
            process.wait()
            now = self.measured()
            self.assertTrue(seen <= now, f"trial {trial}: finished configs disappeared")
            seen = now
            if os.path.exists(self.db):
                self.assertEqual(self.query("PRAGMA integrity_check")[0][0], "ok")
        self.assertGreater(len(seen), 0, "no kill landed after the first result")
        self.assertLess(len(seen), budget, "every trial finished before its kill; the test proves nothing")

        # An uninterrupted rerun completes the budget, measuring only what is missing.
        final = harness.only_result(self, self.ktune_json(*ARGS, "--budget", str(budget), "--db", self.db))
        self.assertEqual(final["evaluated"] + final["reused"], budget)
        self.assertEqual(final["reused"], len(seen))
        self.assertEqual(len(self.measured()), budget)
        self.assertEqual(self.query("PRAGMA integrity_check")[0][0], "ok")
        # The killed runs (those that got as far as starting one) were each marked abandoned by the
        # next tune to open the database; the last one finished: none is left 'running'.
        statuses = [row[0] for row in self.query("SELECT status FROM runs ORDER BY id")]
        self.assertEqual(statuses[-1], "finished")
        self.assertEqual(set(statuses[:-1]) - {"abandoned"}, set(), statuses)
        self.assertLessEqual(final["abandoned_runs"], 1)  # the trial just before it, if it started its run
        # And a further rerun measures nothing.
        again = harness.only_result(self, self.ktune_json(*ARGS, "--budget", str(budget), "--db", self.db))
        self.assertEqual((again["evaluated"], again["reused"]), (0, budget))

    def test_a_live_tuner_and_other_hosts_keep_their_running_runs(self):
        first = subprocess.Popen([harness.ARGS.ktune, *ARGS, "--budget", "200", "--db", self.db],
                                 cwd=self.dir, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.time() + 30
            while time.time() < deadline and len(self.measured()) < 1:
                time.sleep(0.05)
            # A run of another host, which this host cannot judge.
            with sqlite3.connect(self.db) as c:
                c.execute("INSERT INTO runs (started_at, status, command, ktune_version, git_commit, argv, hostname, "
                          "strategy, seed, device_id, kernel_id, problem_id, owner) SELECT started_at, 'running', "
                          "command, ktune_version, git_commit, argv, 'elsewhere', strategy, seed, device_id, kernel_id, "
                          "problem_id, '1 1' FROM runs LIMIT 1")
            second = self.tune_json("--kernel", "rmsnorm", "--backend", "cpu", "--shape", "rows=8,cols=64",
                                     "--budget", "2", "--no-export", "--max-seconds-per-config", "0.01", "--db", self.db)
            self.assertEqual(second["abandoned_runs"], 0)
            self.assertEqual(sorted(r[0] for r in self.query("SELECT status FROM runs")),
                             ["finished", "running", "running"])
        finally:
            first.kill()
            first.wait()

    def test_ctrl_c_records_an_interrupted_run(self):
        process = subprocess.Popen([harness.ARGS.ktune, *ARGS, "--budget", "200", "--db", self.db, "--json"],
                                   cwd=self.dir, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 30
        while time.time() < deadline and len(self.measured()) < 3:
            time.sleep(0.05)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
        self.assertEqual(process.returncode, 130, err)
        summary = harness.only_result(self, json.loads(out))
        self.assertTrue(summary["interrupted"])
        self.assertEqual(summary["stop_reason"], "interrupted")
        self.assertEqual(self.query("SELECT status FROM runs")[0][0], "interrupted")
        # The worker was not hit by the Ctrl-C: nothing is recorded as crashed.
        self.assertEqual(self.query("SELECT COUNT(*) FROM measurements WHERE outcome != 'ok'")[0][0], 0)


if __name__ == "__main__":
    harness.main()
