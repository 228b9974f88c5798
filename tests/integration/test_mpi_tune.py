"""mpirun -n 3 ktune tune on the CPU backend (oversubscribed): rank 0 runs the strategy and keeps
the database, every rank measures; a rank killed mid-run loses only its configs in flight, which
are measured elsewhere, and the tune completes its budget. Also the single-host --devices checks
that need no GPU."""
import json
import os
import shutil
import signal
import subprocess
import time

import harness

SHAPE = "rows=1024,cols=4096"
# Slow enough per config (about 0.1 s: 60 runs of about 1 ms) that a tune of 60 configs on three
# ranks lasts seconds, so the kill lands while configs are in flight.
TUNE = ["tune", "--kernel", "rmsnorm", "--backend", "cpu", "--shape", SHAPE, "--strategy", "random",
        "--seed", "5", "--no-export", "--max-seconds-per-config", "0.15", "--min-samples", "60"]
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_rmaps_base_oversubscribe": "1"}


def mpi_built():
    result = subprocess.run([harness.ARGS.ktune, "devices", "--json"], capture_output=True, text=True, check=True)
    return json.loads(result.stdout)["mpi"]["built"]


def rank_pid(rank):
    """The pid of the ktune process of MPI rank `rank` (not its worker): found by its environment."""
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                environ = f.read().split(b"\0")
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if f"OMPI_COMM_WORLD_RANK={rank}".encode() in environ and b"tune" in argv and b"worker" not in argv:
            return int(pid)
    return None


class MpiTune(harness.KtuneTestCase):
    def setUp(self):
        super().setUp()
        if shutil.which("mpirun") is None:
            self.skipTest("mpirun is not installed (apt install openmpi-bin libopenmpi-dev)")
        # With mpirun present the build must have found MPI too, or this test would prove nothing.
        self.assertTrue(mpi_built(), "mpirun is installed but this ktune was built without MPI")
        self.env = dict(os.environ, **MPI_ENV)

    def mpirun(self, ranks, *args, extra=()):
        """`extra`: more of mpirun's command line, e.g. a second app context after ':'."""
        # --bind-to none: on a host with cores to spare mpirun would pin each rank to one, and the
        # CPU device's fingerprint counts the cores a process may use.
        return subprocess.Popen(["mpirun", "--enable-recovery", "--bind-to", "none", "-n", str(ranks),
                                 harness.ARGS.ktune, *args, *extra],
                                cwd=self.dir, env=self.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, start_new_session=True)

    def finish(self, process, timeout=240):
        try:
            out, err = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            out, err = process.communicate()
            self.fail(f"mpirun did not finish within {timeout} s\nstdout:\n{out}\nstderr:\n{err}")
        self.assertEqual(process.returncode, 0, f"mpirun exited {process.returncode}\nstdout:\n{out}\nstderr:\n{err}")
        return json.loads(out), err

    def measured_on(self):
        rows = self.query("SELECT environment FROM measurements")
        return [json.loads(r[0]).get("measured_on") for r in rows]

    def test_three_ranks_share_the_work_and_one_database(self):
        budget = 24
        document, _ = self.finish(self.mpirun(3, *TUNE, "--budget", str(budget), "--db", self.db, "--json"))
        summary = harness.only_result(self, document)
        self.assertEqual(summary["evaluated"], budget)
        self.assertEqual(summary["devices"], ["cpu:0", "rank 1 (1 device)", "rank 2 (1 device)"])
        configs = [r[0] for r in self.query("SELECT config FROM measurements")]
        self.assertEqual(len(configs), budget)
        self.assertEqual(len(set(configs)), budget, "a config was measured twice")
        where = self.measured_on()
        for device in ("cpu:0", "rank 1 cpu:0", "rank 2 cpu:0"):
            self.assertIn(device, where, f"{device} measured nothing: {where}")
        outcomes = {r[0] for r in self.query("SELECT outcome FROM measurements")}
        self.assertEqual(outcomes, {"ok"})
        # One run, one device: identical CPUs share their measurements.
        self.assertEqual(self.query("SELECT COUNT(*) FROM devices")[0][0], 1)
        # A rerun on one rank reuses everything the three measured.
        again = harness.only_result(self, self.ktune_json(*TUNE, "--budget", str(budget), "--db", self.db))
        self.assertEqual((again["evaluated"], again["reused"]), (0, budget))

    def test_a_killed_rank_loses_only_its_configs_in_flight(self):
        budget = 60
        process = self.mpirun(3, *TUNE, "--budget", str(budget), "--db", self.db, "--json")
        victim = None
        deadline = time.time() + 60
        while time.time() < deadline:  # until rank 2 has measured something
            victim = victim or rank_pid(2)
            if victim and any(w == "rank 2 cpu:0" for w in self.measured_on_safe()):
                break
            time.sleep(0.1)
        self.assertIsNotNone(victim, "rank 2 never started")
        os.kill(victim, signal.SIGKILL)
        document, err = self.finish(process)
        summary = harness.only_result(self, document)
        self.assertEqual(summary["evaluated"], budget, "the budget was not completed after the loss")
        self.assertEqual(len(summary.get("lost", [])), 1, summary)
        self.assertTrue(summary["lost"][0].startswith("rank 2 "), summary["lost"])
        self.assertIn("lost MPI rank 2", err)
        configs = [r[0] for r in self.query("SELECT config FROM measurements")]
        self.assertEqual(len(configs), budget)
        self.assertEqual(len(set(configs)), budget, "a config was recorded twice")
        where = self.measured_on()
        self.assertGreater(where.count("rank 1 cpu:0"), 0)
        self.assertGreater(where.count("cpu:0"), 0)

    def test_different_devices_are_tuned_separately(self):
        if shutil.which("taskset") is None or os.cpu_count() < 2:
            self.skipTest("needs taskset and two CPUs to make a rank see another device")
        budget = 6
        args = [*TUNE, "--budget", str(budget), "--db", self.db, "--json"]
        # Rank 2 may use one core: to ktune a CPU with another fingerprint (threads=1).
        process = self.mpirun(2, *args, extra=[":", "-n", "1", "taskset", "-c", "0", harness.ARGS.ktune, *args])
        document, _ = self.finish(process)
        summaries = document["results"]
        self.assertEqual(len(summaries), 2, "two device models give two summaries")
        self.assertEqual([s["devices"] for s in summaries], [["cpu:0", "rank 1 (1 device)"], ["rank 2 (1 device)"]])
        self.assertEqual([s["evaluated"] for s in summaries], [budget, budget])
        fingerprints = [r[0] for r in self.query("SELECT fingerprint FROM devices ORDER BY id")]
        self.assertEqual(len(fingerprints), 2)
        self.assertIn("threads=1|", fingerprints[1])
        per_device = self.query("SELECT device_id, COUNT(*) FROM measurements GROUP BY device_id ORDER BY device_id")
        self.assertEqual([n for _, n in per_device], [budget, budget])

    def measured_on_safe(self):
        try:
            return self.measured_on()
        except Exception:  # the database is not there yet, or its tables are being created
            return []


class Devices(harness.KtuneTestCase):
    def test_device_lists(self):
        summary = harness.only_result(self, self.ktune_json(*TUNE, "--budget", "3", "--devices", "all", "--db", self.db))
        self.assertEqual((summary["evaluated"], summary["devices"]), (3, ["cpu:0"]))
        for bad, code, text in [("1", 3, "has no device 1"), ("0,x", 2, "'x' is not a device index"),
                                ("0,0", 2, "listed twice"), ("-1", 2, "not a device index")]:
            result = self.ktune(*TUNE, "--budget", "3", "--devices", bad, "--db", self.db, check=code)
            self.assertIn(text, result.stderr)


if __name__ == "__main__":
    harness.main()
