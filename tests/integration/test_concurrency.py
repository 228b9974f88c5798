"""Several tuners writing to one database at once: different kernels side by side, and the same
kernel and problem from two processes. Every process finishes, none reports a locked or busy
database, and the database afterwards holds each result once, consistent with what the processes
reported."""
import json
import os
import re
import subprocess
import time

import harness

# Small problems and short timings: a tune of a few configs takes a fraction of a second, so the
# processes of one round are all inside their measure-and-store loop at the same time.
FAST = ["--backend", "cpu", "--max-seconds-per-config", "0.02", "--min-samples", "3"]
PREFERRED = ("rmsnorm", "swiglu", "layernorm", "softmax")
# Whole words: the summary's "busy_share" (how busy the device was) is not contention.
LOCK_WORDS = re.compile(r"\blocked\b|\bbusy\b", re.IGNORECASE)


def contention(text):
    """The first lock word of `text`, the source tree's path left out (the JSON names the space
    file by it, and a checkout may be called anything)."""
    return LOCK_WORDS.search(text.replace(harness.ARGS.source_dir, "<source>"))
ROUNDS = 5


class Concurrency(harness.KtuneTestCase):
    @classmethod
    def setUpClass(cls):
        # ktune runs in a scratch directory: a relative --ktune is relative to where the test started.
        harness.ARGS.ktune = os.path.abspath(harness.ARGS.ktune)

    def start(self, kernel, shape, budget, db, *extra):
        args = ["tune", "--kernel", kernel, "--shape", shape, "--budget", str(budget), "--db", db,
                "--json", *FAST, *extra]
        process = subprocess.Popen([harness.ARGS.ktune, *args], cwd=self.dir, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True)
        process.args_text = " ".join(args)
        return process

    def finish(self, processes, what):
        """Waits for every process; asserts each exited 0 without a locked/busy message and
        returns their JSON summaries in start order."""
        outputs = []
        for process in processes:
            try:
                out, err = process.communicate(timeout=120)
            except subprocess.TimeoutExpired:
                for other in processes:
                    if other.poll() is None:
                        other.kill()
                self.fail(f"{what}: ktune {process.args_text} did not finish within 120 s")
            outputs.append((process, out, err))
        summaries = []
        for process, out, err in outputs:
            context = (f"{what}: ktune {process.args_text} exited {process.returncode}\n"
                       f"stdout:\n{out}\nstderr:\n{err}")
            self.assertEqual(process.returncode, 0, context)
            self.assertIsNone(contention(err), "database contention reported on stderr; " + context)
            self.assertIsNone(contention(out), "database contention reported on stdout; " + context)
            try:
                summaries.append(harness.only_result(self, json.loads(out)))
            except json.JSONDecodeError as error:
                self.fail(f"{what}: stdout is not JSON ({error}); {context}")
        return summaries

    def assert_intact(self, db, what):
        self.assertEqual(self.query("PRAGMA integrity_check", db=db), [("ok",)], f"{what}: integrity_check")
        self.assertEqual(self.query("PRAGMA foreign_key_check", db=db), [], f"{what}: foreign_key_check")

    def run_row(self, db, run_id):
        rows = self.query("SELECT r.status, k.family, r.kernel_id, r.problem_id FROM runs r "
                          "JOIN kernels k ON k.id = r.kernel_id WHERE r.id = ?", (run_id,), db=db)
        self.assertEqual(len(rows), 1, f"run {run_id} is not in the database")
        return rows[0]

    def stored(self, db, kernel_id, problem_id):
        """config_key -> (run_id, outcome, median_ns, id, config) of the stored measurements of a
        (kernel, problem); asserts that no config is stored twice."""
        rows = self.query("SELECT config_key, run_id, outcome, median_ns, id, config FROM measurements "
                          "WHERE kernel_id = ? AND problem_id = ? ORDER BY id", (kernel_id, problem_id), db=db)
        keys = [row[0] for row in rows]
        duplicates = sorted({key for key in keys if keys.count(key) > 1})
        self.assertEqual(duplicates, [], f"configs stored more than once for kernel {kernel_id}, "
                                         f"problem {problem_id}")
        return {row[0]: row[1:5] + (json.loads(row[5]),) for row in rows}

    def assert_best_consistent(self, summary, rows, what):
        """The reported best config is stored; when the stored row is from the reporting run (and
        not from another process that measured the same config first), it is the same result."""
        best = summary["best"]
        self.assertIsNotNone(best, f"{what}: no best config reported")
        matches = [row for row in rows.values() if row[4] == best["config"]]
        self.assertEqual(len(matches), 1, f"{what}: the reported best config {best['config']} is not "
                                          f"stored once; stored: {[row[4] for row in rows.values()]}")
        run_id, outcome, median_ns, _, _ = matches[0]
        if run_id == summary["run_id"]:
            self.assertEqual((outcome, median_ns), ("ok", best["median_ns"]),
                             f"{what}: the stored result of the reported best config differs from the report")
        return run_id

    def test_different_kernels_at_once(self):
        kernels = self.cpu_kernels()
        budget = 6
        interleaved_rounds = 0
        for round_index in range(ROUNDS):
            # Round 0 creates the database from several processes at once; later rounds write new
            # problems into the existing file. Odd rounds start the processes 0.1 s apart, so that
            # some open the database while others are storing results or closing it (the last
            # connection to close checkpoints the write-ahead log into the file and removes it).
            shape = f"rows={16 * (round_index + 1)},cols=256"
            stagger = 0.1 if round_index % 2 else 0.0
            what = f"round {round_index} ({shape}, started {stagger} s apart)"
            processes = []
            for kernel in kernels:
                if processes and stagger:
                    time.sleep(stagger)
                processes.append(self.start(kernel, shape, budget, self.db))
            summaries = self.finish(processes, what)
            self.assert_intact(self.db, what)
            for kernel, summary in zip(kernels, summaries):
                label = f"{what}, {kernel}"
                self.assertEqual(summary["kernel"], kernel, label)
                self.assertEqual((summary["evaluated"], summary["reused"]), (budget, 0), label)
                self.assertEqual(sum(summary["outcomes"].values()), budget, label)
                status, family, kernel_id, problem_id = self.run_row(self.db, summary["run_id"])
                self.assertEqual((status, family), ("finished", kernel), label)
                # Everything the process evaluated is stored, under its run and its own target.
                rows = self.stored(self.db, kernel_id, problem_id)
                self.assertEqual(len(rows), summary["evaluated"],
                                 f"{label}: {len(rows)} stored measurements, the summary says "
                                 f"{summary['evaluated']} evaluated")
                self.assertEqual({row[0] for row in rows.values()}, {summary["run_id"]}, label)
                outcomes = {}
                for _, outcome, _, _, _ in rows.values():
                    outcomes[outcome] = outcomes.get(outcome, 0) + 1
                self.assertEqual(outcomes, summary["outcomes"], f"{label}: stored outcomes differ")
                self.assertEqual(self.assert_best_consistent(summary, rows, label), summary["run_id"], label)
                self.assertTrue(os.path.exists(os.path.join(self.dir, summary["header"])), label)
            # Proof that the writes really overlapped: in store order the run ids alternate.
            run_ids = {summary["run_id"] for summary in summaries}
            order = [row[0] for row in self.query("SELECT run_id FROM measurements WHERE run_id IN (%s) "
                                                  "ORDER BY id" % ",".join("?" * len(run_ids)),
                                                  tuple(run_ids))]
            switches = sum(1 for a, b in zip(order, order[1:]) if a != b)
            interleaved_rounds += switches > len(run_ids) - 1
        total = self.query("SELECT COUNT(*) FROM measurements")[0][0]
        self.assertEqual(total, ROUNDS * len(kernels) * budget)
        self.assertGreater(interleaved_rounds, 0,
                           "no round had its processes storing results at the same time; the test "
                           "proves nothing about concurrent writers")

    def test_same_kernel_from_two_processes(self):
        budget = 8
        shape = "rows=32,cols=256"
        both_measured_rounds = 0
        for round_index in range(ROUNDS):
            # A new database each round: both processes also create it at the same moment.
            db = os.path.join(self.dir, f"same-{round_index}.db")
            what = f"round {round_index}"
            processes = [self.start("rmsnorm", shape, budget, db, "--strategy", "brute_force")
                         for _ in range(2)]
            summaries = self.finish(processes, what)
            self.assert_intact(db, what)
            targets = set()
            for summary in summaries:
                self.assertEqual(summary["evaluated"] + summary["reused"], budget, what)
                status, family, kernel_id, problem_id = self.run_row(db, summary["run_id"])
                self.assertEqual((status, family), ("finished", "rmsnorm"), what)
                targets.add((kernel_id, problem_id))
            self.assertEqual(len(targets), 1, f"{what}: the two processes stored different targets")
            (kernel_id, problem_id), = targets
            # The same brute-force prefix: `budget` configs, each stored once, by one of the two runs.
            rows = self.stored(db, kernel_id, problem_id)
            self.assertEqual(len(rows), budget, f"{what}: {len(rows)} configs stored, expected {budget}")
            run_ids = {summary["run_id"] for summary in summaries}
            strangers = {key: row[0] for key, row in rows.items() if row[0] not in run_ids}
            self.assertEqual(strangers, {}, f"{what}: results stored by neither process")
            # Claims: no config measured by both, so what each measured is what it stored.
            self.assertEqual(sum(summary["evaluated"] for summary in summaries), budget, f"{what}: measured twice")
            for summary in summaries:
                mine = sum(1 for row in rows.values() if row[0] == summary["run_id"])
                self.assertEqual(mine, summary["evaluated"],
                                 f"{what}: run {summary['run_id']} has {mine} stored results but "
                                 f"evaluated {summary['evaluated']}")
                self.assert_best_consistent(summary, rows, f"{what}, run {summary['run_id']}")
            both_measured_rounds += all(summary["evaluated"] > 0 for summary in summaries)

            # A sequential rerun measures nothing and reports the database's best, which is also
            # what the header it exports holds.
            rerun = self.finish([self.start("rmsnorm", shape, budget, db, "--strategy", "brute_force")],
                                f"{what} rerun")[0]
            self.assertEqual((rerun["evaluated"], rerun["reused"]), (0, budget), f"{what} rerun")
            self.assertEqual(self.stored(db, kernel_id, problem_id), rows, f"{what}: the rerun changed the results")
            ok = self.query("SELECT id, config, median_ns FROM measurements WHERE kernel_id = ? AND "
                            "problem_id = ? AND outcome = 'ok' ORDER BY median_ns, id", (kernel_id, problem_id),
                            db=db)
            best_id, _, best_median = ok[0]
            fastest = [json.loads(config) for _, config, median in ok if median == best_median]  # ties
            self.assertEqual(rerun["best"]["median_ns"], best_median, f"{what} rerun: best is not the stored best")
            self.assertIn(rerun["best"]["config"], fastest, f"{what} rerun: best is not the stored best")
            with open(os.path.join(self.dir, rerun["header"][:-len(".hpp")] + ".json")) as f:
                table = json.load(f)
            entries = [e for e in table["entries"] if e["shape"] == {"rows": 32, "cols": 256}]
            self.assertEqual([e["measurement_id"] for e in entries], [best_id], f"{what}: exported table")
            self.assertEqual(self.query("SELECT COUNT(*) FROM runs WHERE status = 'finished'", db=db)[0][0], 3)
            self.assert_intact(db, f"{what} rerun")
        self.assertGreater(both_measured_rounds, 0,
                           "in no round did both processes measure; they never overlapped and the "
                           "test proves nothing about concurrent writers of one kernel")

    def test_tuners_with_other_seeds_never_measure_a_config_twice(self):
        """Four tuners of one problem with different seeds (so overlapping, not identical, proposals):
        the evaluations they report add up to the rows stored, and each one's best is the stored
        result of its best config (a loser's result was once dropped while its summary kept it)."""
        db = os.path.join(self.dir, "seeds.db")
        shape = "rows=32,cols=512"
        processes = [self.start("rmsnorm", shape, 20, db, "--strategy", "random", "--seed", str(seed))
                     for seed in range(1, 5)]
        summaries = self.finish(processes, "four seeds")
        self.assert_intact(db, "four seeds")
        stored = self.query("SELECT config_key, median_ns FROM measurements", db=db)
        self.assertEqual(sum(s["evaluated"] for s in summaries), len(stored))
        medians = {json.dumps(json.loads(key), sort_keys=True): median for key, median in stored}
        for summary in summaries:
            key = json.dumps(summary["best"]["config"], sort_keys=True)
            if key in medians:
                self.assertEqual(summary["best"]["median_ns"], medians[key])
        self.assertEqual(self.query("SELECT count(*) FROM claims", db=db)[0][0], 0)

    def cpu_kernels(self):
        listed = self.ktune_json("list")["kernels"]
        cpu = [k["kernel"] for k in listed if any(b["backend"] == "cpu" for b in k["backends"])]
        kernels = [name for name in PREFERRED if name in cpu]
        self.assertGreaterEqual(len(kernels), 3, f"too few of {PREFERRED} on the CPU backend: {cpu}")
        return kernels


if __name__ == "__main__":
    harness.main()
