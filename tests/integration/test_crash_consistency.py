"""kill -9 at random moments of `ktune db merge`, export and a tune's --record (the tune's own kill
loop is test_kill_resume.py, a killed worker test_signals.py). A merge's target database is always
intact and holds either nothing of the source or all of it; the snapshot a killed merge leaves is
private to its user and removed by the next merge; a final merge completes. Headers and
recordings are whole under their names, whenever the kill came."""
import gzip
import json
import os
import random
import re
import shutil
import signal
import sqlite3
import stat
import subprocess
import time

import harness

ROWS = 300000


class MergeKilled(harness.KtuneTestCase):
    def test_kill_minus_nine_during_merges(self):
        source = os.path.join(self.dir, "source.db")
        total = harness.large_database(self, source, ROWS)
        target_dir = os.path.join(self.dir, "target")
        os.makedirs(target_dir)
        target = os.path.join(target_dir, "into.db")
        rng = random.Random(34)
        killed_mid_merge = 0
        for trial in range(6):
            process = subprocess.Popen([harness.ARGS.ktune, "db", "merge", source, "--into", target], cwd=self.dir,
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(rng.uniform(0.05, 1.2))
            killed_mid_merge += process.poll() is None
            process.send_signal(signal.SIGKILL)
            process.wait()
            if os.path.exists(target):
                with sqlite3.connect(target) as c:
                    self.assertEqual(c.execute("PRAGMA integrity_check").fetchone()[0], "ok", f"trial {trial}")
                    merged = c.execute("SELECT count(*) FROM measurements").fetchone()[0]
                self.assertIn(merged, (0, total), f"trial {trial}: half a merge")
            leftovers = [n for n in os.listdir(target_dir) if n.startswith(".ktune-merge-")]
            self.assertLessEqual(len(leftovers), 1, f"trial {trial}: earlier snapshots were not removed")
            for name in leftovers:
                mode = stat.S_IMODE(os.stat(os.path.join(target_dir, name)).st_mode)
                self.assertEqual(mode, 0o700, f"trial {trial}: a leftover snapshot readable by others")
        self.assertGreater(killed_mid_merge, 0, "every merge ended before its kill; the test proves nothing")
        result = self.ktune_json("db", "merge", source, "--into", target)
        with sqlite3.connect(target) as c:
            self.assertEqual(c.execute("SELECT count(*) FROM measurements").fetchone()[0], total)
        self.assertEqual([n for n in os.listdir(target_dir) if n.startswith(".ktune-merge-")], [])
        self.assertEqual(len(result["merged"]), 1)


def undated(text):
    """An export's bytes without the time it was generated at, which differs between exports."""
    return re.sub(rb"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", b"<time>", text)


class ExportKilled(harness.KtuneTestCase):
    def test_kill_minus_nine_during_exports_never_leaves_half_a_header(self):
        self.ktune("tune", "-k", "rmsnorm", "-b", "cpu", "--shape", "rows=16,cols=256", "--budget", "2",
                   "--max-seconds-per-config", "0.01", "--db", self.db, "--no-export", check=0)
        reference = os.path.join(self.dir, "reference")
        self.ktune("export", "--db", self.db, "--out", reference, check=0)
        complete = {}
        for root, _, files in os.walk(reference):
            for name in files:
                with open(os.path.join(root, name), "rb") as f:
                    complete[os.path.relpath(os.path.join(root, name), reference)] = f.read()
        self.assertTrue(complete)
        tuned = os.path.join(self.dir, "tuned")
        rng = random.Random(7)
        for trial in range(15):
            process = subprocess.Popen([harness.ARGS.ktune, "export", "--db", self.db, "--out", tuned],
                                       cwd=self.dir, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(rng.uniform(0.0, 0.05))
            process.send_signal(signal.SIGKILL)
            process.wait()
            for root, _, files in os.walk(tuned):
                for name in files:
                    if ".partial-" in name:
                        continue  # a temporary a kill -9 left: never under a header's name
                    relative = os.path.relpath(os.path.join(root, name), tuned)
                    with open(os.path.join(root, name), "rb") as f:
                        self.assertEqual(undated(f.read()), undated(complete[relative]),
                                         f"trial {trial}: {relative} is not whole")


class RecordKilled(harness.KtuneTestCase):
    def test_kill_minus_nine_during_recorded_tunes_never_leaves_half_a_recording(self):
        """A tune with --record killed at random moments (measuring, recording, resuming): every
        recording file under its name is whole, and a final run records every config."""
        record = os.path.join(self.dir, "record")
        def tune(db):
            return [harness.ARGS.ktune, "tune", "-k", "gemm", "-b", "cpu", "--shape", "m=128,n=128,k=128",
                    "--strategy", "brute_force", "--max-seconds-per-config", "0.002", "--min-samples", "3", "--db", db,
                    "--no-export", "--record", record]
        started = time.time()  # how long a whole run takes here, on a database of its own
        subprocess.run(tune(os.path.join(self.dir, "timing.db")), cwd=self.dir, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        whole_run = time.time() - started
        shutil.rmtree(record)
        rng = random.Random(11)
        killed_while_running = 0
        for trial in range(20):
            if trial % 2 == 0:  # half the tunes measure everything again, half resume and reuse
                for suffix in ("", "-wal", "-shm"):
                    if os.path.exists(self.db + suffix):
                        os.remove(self.db + suffix)
            process = subprocess.Popen(tune(self.db), cwd=self.dir, stdout=subprocess.DEVNULL,
                                       stderr=subprocess.DEVNULL)
            time.sleep(rng.uniform(0.0, 1.2 * whole_run))
            killed_while_running += process.poll() is None
            process.send_signal(signal.SIGKILL)
            process.wait()
            for name in os.listdir(record) if os.path.isdir(record) else []:
                if ".partial-" in name:
                    continue  # a temporary a kill -9 left: never under a recording's name
                with gzip.open(os.path.join(record, name)) as f:
                    json.load(f)  # whole: a torn file would not decompress or parse
        self.assertGreater(killed_while_running, 0, "every tune ended before its kill; the test proves nothing")
        subprocess.run(tune(self.db), cwd=self.dir, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        names = sorted(n for n in os.listdir(record) if ".partial-" not in n)
        self.assertEqual(len(names), 2, names)  # the Kernel Tuner cache and the T4 results
        with gzip.open(os.path.join(record, [n for n in names if "_T4" in n][0])) as f:
            self.assertEqual(len(json.load(f)["results"]), 72)  # every config of the space
        with sqlite3.connect(self.db) as c:
            self.assertEqual(c.execute("PRAGMA integrity_check").fetchone()[0], "ok")
            self.assertEqual(c.execute("SELECT count(*) FROM measurements").fetchone()[0], 72)


class EveryCommandStops(harness.KtuneTestCase):
    def test_sigterm_ends_every_command_within_a_second(self):
        """Each command, sent SIGTERM shortly after it starts, ends within a second (exit 143, or its
        own exit when it had already finished)."""
        self.ktune("tune", "-k", "rmsnorm", "-b", "cpu", "--shape", "rows=16,cols=256", "--budget", "2",
                   "--max-seconds-per-config", "0.01", "--db", self.db, "--no-export", check=0)
        cache = os.path.join(harness.ARGS.source_dir, "..", "shared", "data", "kernel_tuner_caches",
                             "convolution_milo_A4000.json.gz")
        commands = [
            ["list"], ["devices"], ["space", "-k", "gemm", "-b", "cpu"],
            ["export", "--db", self.db, "--out", os.path.join(self.dir, "tuned")],
            ["report", "--db", self.db, "--out", os.path.join(self.dir, "report")],
            ["replay", "--cache", cache, "--budget", "40", "--repeats", "100000"],
            ["db", "merge", self.db, "--into", os.path.join(self.dir, "merged.db")],
            ["bench", "-b", "cpu", "-k", "rmsnorm", "--shape", "rows=64,cols=4096", "--repetitions", "1000",
             "--max-seconds-per-repetition", "0.05", "--db", self.db, "--out", os.path.join(self.dir, "bench.json")],
            ["tune", "-k", "rmsnorm", "-b", "cpu", "--shape", "rows=64,cols=4096", "--time-limit", "60",
             "--max-seconds-per-config", "0.05", "--db", self.db, "--no-export"],
        ]
        for command in commands:
            process = subprocess.Popen([harness.ARGS.ktune, *command], cwd=self.dir, stdout=subprocess.DEVNULL,
                                       stderr=subprocess.PIPE, text=True)
            time.sleep(0.3)
            running = process.poll() is None
            process.send_signal(signal.SIGTERM)
            sent = time.time()
            _, err = process.communicate(timeout=60)
            with self.subTest(command=command[0]):
                self.assertLess(time.time() - sent, 2.0)
                if running:
                    self.assertIn(process.returncode, (143, 0), err)  # 0: it finished as the signal came


if __name__ == "__main__":
    harness.main()
