"""Variants that crash, abort, hang, compute wrong results or NaN, run out of memory, or decline to
run: each is
recorded with its outcome and message, the worker is restarted, and tuning goes on."""
import json
import os
import subprocess
import time

import harness

TEST_FAMILIES = {"KTUNE_ENABLE_TEST_FAMILIES": "1"}


class Faults(harness.KtuneTestCase):
    def test_every_fault_is_classified_and_tuning_continues(self):
        summary = self.tune_json("--kernel", "fault_injection", "--shape", "n=5000",
                                  "--db", self.db, "--config-timeout", "2", "--no-export",
                                  "--max-seconds-per-config", "0.02", env_extra=TEST_FAMILIES)
        self.assertEqual(summary["space"]["valid"], 10)
        self.assertEqual(summary["outcomes"], {"ok": 3, "crashed": 2, "timeout": 1, "wrong_result": 2,
                                               "unsupported": 1, "out_of_memory": 1})
        self.assertEqual(summary["best"]["config"], {"behaviour": "ok", "work": 1})
        rows = dict(self.query("SELECT json_extract(config, '$.behaviour') || '/' || outcome, message "
                               "FROM measurements WHERE json_extract(config, '$.work') = 1"))
        self.assertIn("signal 11", rows["crash/crashed"])
        self.assertIn("signal 6", rows["abort/crashed"])
        self.assertIn("no answer within 2.0 s", rows["hang/timeout"])
        self.assertIn("relative L2 error", rows["wrong/wrong_result"])
        self.assertIn("NaN", rows["nan/wrong_result"])
        self.assertIn("declines", rows["unsupported/unsupported"])
        self.assertIn("could not be allocated", rows["oom/out_of_memory"])
        # A rerun reuses the failures too: a crashing config is not run again.
        again = self.tune_json("--kernel", "fault_injection", "--shape", "n=5000", "--db", self.db,
                                "--config-timeout", "2", "--no-export", env_extra=TEST_FAMILIES)
        self.assertEqual((again["evaluated"], again["reused"]), (0, 10))

    def test_timeouts_are_retried_under_a_longer_limit_only(self):
        args = ["tune", "--kernel", "fault_injection", "--shape", "n=5000", "--db", self.db, "--no-export",
                "--max-seconds-per-config", "0.02"]
        first = harness.only_result(self, self.ktune_json(*args, "--config-timeout", "1", env_extra=TEST_FAMILIES))
        self.assertEqual(first["outcomes"]["timeout"], 1)
        same = harness.only_result(self, self.ktune_json(*args, "--config-timeout", "1", env_extra=TEST_FAMILIES))
        self.assertEqual((same["evaluated"], same["reused"]), (0, 10))
        longer = harness.only_result(self, self.ktune_json(*args, "--config-timeout", "1.5", env_extra=TEST_FAMILIES))
        self.assertEqual((longer["evaluated"], longer["reused"]), (1, 9))  # only the hang, measured again
        self.assertEqual(self.query("SELECT COUNT(*) FROM measurements")[0][0], 10)
        message = self.query("SELECT message FROM measurements WHERE outcome = 'timeout'")[0][0]
        self.assertIn("1.5 s", message)

    def test_problem_set_up_is_neither_a_timeout_nor_evaluation_time(self):
        # The reference of this problem takes 1.5 s, longer than the 0.5 s a config may: it is
        # prepared before the first config, outside its timeout and outside the time limit.
        space = os.path.join(self.dir, "ok-only.json")
        with open(space, "w") as f:
            json.dump({"family": "fault_injection", "backend": "cpu",
                       "parameters": [{"name": "behaviour", "values": ["ok"]}, {"name": "work", "values": [1, 2]}]}, f)
        summary = self.tune_json("--kernel", "fault_injection", "--space", space,
                                  "--shape", "n=1000,setup_ms=1500", "--db", self.db, "--no-export",
                                  "--config-timeout", "0.5", "--time-limit", "0.4",
                                  "--max-seconds-per-config", "0.02", env_extra=TEST_FAMILIES)
        self.assertEqual(summary["outcomes"], {"ok": 2})  # both ran: 1.5 s of set-up is not in the 0.4 s
        first_outcome, prepare_seconds, evaluation_seconds = self.query(
            "SELECT outcome, json_extract(environment, '$.prepare_seconds'), "
            "json_extract(environment, '$.evaluation_seconds') FROM measurements ORDER BY id")[0]
        self.assertEqual(first_outcome, "ok")
        self.assertGreaterEqual(prepare_seconds, 1.5)
        self.assertLess(evaluation_seconds, 0.5)

    def test_no_working_config_exits_1_and_keeps_the_header(self):
        space = os.path.join(self.dir, "broken.json")
        with open(space, "w") as f:
            json.dump({"family": "fault_injection", "backend": "cpu",
                       "parameters": [{"name": "behaviour", "values": ["crash", "wrong"]},
                                      {"name": "work", "values": [1]}],
                       "default": {"behaviour": "crash", "work": 1}}, f)
        os.makedirs(os.path.join(self.dir, "tuned", "cpu"))
        header = os.path.join(self.dir, "tuned", "cpu", "fault_injection.hpp")
        with open(header, "w") as f:
            f.write("// an earlier, good header\n")
        result = self.ktune("tune", "--kernel", "fault_injection", "--space", space, "--db", self.db,
                            env_extra=TEST_FAMILIES, check=1)
        self.assertIn("no config of fault_injection ran correctly", result.stderr)
        with open(header) as f:
            self.assertEqual(f.read(), "// an earlier, good header\n")

    def test_worker_dies_with_a_killed_tuner(self):
        process = subprocess.Popen([harness.ARGS.ktune, "tune", "--kernel", "fault_injection", "--shape", "n=100",
                                    "--strategy", "brute_force", "--db", self.db, "--config-timeout", "60",
                                    "--space", self.hang_space()],
                                   cwd=self.dir, env={**os.environ, **TEST_FAMILIES},
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 20
        workers = []
        while time.time() < deadline and not workers:
            time.sleep(0.1)
            workers = self.worker_pids(process.pid)
        self.assertTrue(workers, "no worker started")
        process.kill()  # kill -9 of the tuner alone
        process.wait()
        deadline = time.time() + 5
        while time.time() < deadline and any(os.path.exists(f"/proc/{pid}") for pid in workers):
            time.sleep(0.1)
        alive = [pid for pid in workers if os.path.exists(f"/proc/{pid}")]
        self.assertEqual(alive, [], "a worker outlived its tuner")

    def hang_space(self):
        path = os.path.join(self.dir, "hang.json")
        with open(path, "w") as f:
            json.dump({"family": "fault_injection", "backend": "cpu",
                       "parameters": [{"name": "behaviour", "values": ["hang"]}, {"name": "work", "values": [1]}],
                       "default": {"behaviour": "hang", "work": 1}}, f)
        return path

    @staticmethod
    def worker_pids(parent):
        pids = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    cmdline = f.read().split(b"\0")
            except OSError:
                continue
            if int(fields[1]) == parent and b"worker" in cmdline:
                pids.append(int(entry))
        return pids

    def test_test_family_is_hidden_by_default(self):
        result = self.ktune("tune", "--kernel", "fault_injection", "--db", self.db, check=2)
        self.assertIn("unknown kernel 'fault_injection'", result.stderr)


if __name__ == "__main__":
    harness.main()
