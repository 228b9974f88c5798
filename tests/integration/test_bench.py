"""`ktune bench` on the CPU backend: the --out file is Google Benchmark JSON that ktune compare
reads; the database keeps every bench run as history; tuned configs come from the database (the
exact shape, else the nearest tuned one), from generated tables with --tuned (by the header's own
lookup: fallback chain and nearest tuned shape), else the default;
bad input exits 2 before the device opens (no database left behind); Ctrl-C exits 130 keeping
the benchmarks that finished."""
import json
import os
import re
import signal
import statistics
import subprocess
import time

import harness

SHAPE = "rows=64,cols=256"
TUNED_NAME = "rmsnorm/cpu/rows=64,cols=256/fp32"
# Three short repetitions: each benchmark takes a few hundredths of a second on the CPU.
FAST = ["--repetitions", "3", "--max-seconds-per-repetition", "0.05"]
NAME_PATTERN = re.compile(r"^[a-z_]+/cpu/([a-z_]+=[0-9]+)(,[a-z_]+=[0-9]+)*/fp32(/default)?$")


def by_run_name(document):
    """{run_name: {"iteration": [entries], "aggregate": {aggregate_name: entry}}} of an --out file."""
    grouped = {}
    for entry in document["benchmarks"]:
        group = grouped.setdefault(entry["run_name"], {"iteration": [], "aggregate": {}})
        if entry["run_type"] == "iteration":
            group["iteration"].append(entry)
        else:
            group["aggregate"][entry["aggregate_name"]] = entry
    return grouped


class Bench(harness.KtuneTestCase):
    def path(self, name):
        return os.path.join(self.dir, name)

    def bench(self, *args, out="out.json", db=None, check=0):
        """Runs ktune bench --json on the CPU; returns (summary, the --out document)."""
        summary = self.ktune_json("bench", "-b", "cpu", *FAST, *args, "--out", self.path(out),
                                  "--db", db or self.db, check=check)
        with open(self.path(out)) as f:
            return summary, json.load(f)

    def tune(self, *args):
        return self.tune_json("-k", "rmsnorm", "-b", "cpu", "--budget", "6", "--db", self.db, *args)

    def space_default(self):
        with open(os.path.join(harness.ARGS.source_dir, "search_spaces", "rmsnorm.cpu.json")) as f:
            return json.load(f)["default"]

    def item(self, summary, name):
        items = [b for b in summary["benchmarks"] if b["name"] == name]
        self.assertEqual(len(items), 1, f"{name} in {[b['name'] for b in summary['benchmarks']]}")
        return items[0]

    def test_out_file_is_google_benchmark_json(self):
        summary, document = self.bench("-k", "rmsnorm", "--shape", SHAPE)
        context = document["context"]
        for key in ("host_name", "date", "ktune_version", "git_commit", "device", "backend"):
            self.assertTrue(context.get(key), f"context lacks {key}: {context}")
        self.assertEqual(context["backend"], "cpu")
        self.assertEqual(context["device"], summary["device"])
        self.assertRegex(context["date"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d")

        grouped = by_run_name(document)
        self.assertEqual(set(grouped), {b["name"] for b in summary["benchmarks"]})
        for name, group in grouped.items():
            self.assertRegex(name, NAME_PATTERN)
            iterations = group["iteration"]
            self.assertEqual([e["repetition_index"] for e in iterations], [0, 1, 2], name)
            for entry in iterations:
                self.assertEqual(entry["name"], name)
                self.assertEqual(entry["repetitions"], 3)
                self.assertGreater(entry["real_time"], 0)
                self.assertIn(entry["time_unit"], ("ns", "us", "ms", "s"))
                self.assertGreater(entry["iterations"], 0)
                self.assertNotIn("error_occurred", entry)
            self.assertEqual(set(group["aggregate"]), {"mean", "median", "stddev", "cv"}, name)
            times = [e["real_time"] for e in iterations]
            self.assertAlmostEqual(group["aggregate"]["mean"]["real_time"], statistics.mean(times), places=9)
            self.assertAlmostEqual(group["aggregate"]["median"]["real_time"], statistics.median(times), places=9)
            self.assertAlmostEqual(group["aggregate"]["stddev"]["real_time"], statistics.stdev(times), places=9)

        # The tuned benchmark and its copy baseline (the same bytes), with % of the baseline's speed.
        tuned = self.item(summary, TUNED_NAME)
        self.assertEqual(tuned["role"], "tuned")
        baseline_name = tuned["baseline"]
        self.assertRegex(baseline_name, r"^copy/cpu/n=[0-9]+/fp32$")
        self.assertEqual(self.item(summary, baseline_name)["role"], "baseline")
        baseline_median = statistics.median(e["real_time"] for e in grouped[baseline_name]["iteration"])
        for entry in grouped[TUNED_NAME]["iteration"]:
            self.assertAlmostEqual(entry["percent_of_baseline"], 100 * baseline_median / entry["real_time"], places=6)
            self.assertGreater(entry["bytes_per_second"], 0)
        for entry in grouped[baseline_name]["iteration"]:
            self.assertNotIn("percent_of_baseline", entry)

        result = self.ktune("compare", self.path("out.json"), self.path("out.json"), check=0)
        self.assertIn(TUNED_NAME, result.stdout)
        self.assertIn("0 regressions, 0 improvements, 2 same", result.stdout)

    def test_the_database_keeps_the_run_and_each_benchmark(self):
        summary, document = self.bench("-k", "rmsnorm", "--shape", SHAPE)
        runs = self.query("SELECT id, status, git_commit, suite, repetitions, finished_at FROM bench_runs")
        self.assertEqual(len(runs), 1)
        run_id, status, git_commit, suite, repetitions, finished_at = runs[0]
        self.assertEqual(run_id, summary["bench_run_id"])
        self.assertEqual(status, "finished")
        self.assertEqual(git_commit, document["context"]["git_commit"])
        self.assertEqual(suite, "shape")
        self.assertEqual(repetitions, 3)
        self.assertIsNotNone(finished_at)

        rows = self.query("SELECT name, role, outcome, repetitions_ns, config_source FROM bench_results "
                          "WHERE bench_run_id = ?", (run_id,))
        grouped = by_run_name(document)
        self.assertEqual(sorted(r[0] for r in rows), sorted(grouped))
        for name, role, outcome, repetitions_ns, config_source in rows:
            samples = json.loads(repetitions_ns)
            self.assertEqual(len(samples), 3, name)
            self.assertEqual(outcome, "ok")
            self.assertEqual(role, self.item(summary, name)["role"])
            # The same samples as the file (nanoseconds there too).
            for sample, entry in zip(samples, grouped[name]["iteration"]):
                self.assertAlmostEqual(sample, entry["real_time"], places=3)

    def test_tuned_config_from_the_database_exact_then_nearest_shape(self):
        tune = self.tune("--shape", SHAPE, "--no-export")
        best, default = tune["best"]["config"], tune["default"]["config"]
        self.assertEqual(default, self.space_default())

        summary, document = self.bench("-k", "rmsnorm", "--shape", SHAPE)
        tuned = self.item(summary, TUNED_NAME)
        self.assertEqual(tuned["config_source"], "database")
        self.assertEqual(tuned["config"], best)
        labels = {e["run_name"]: e["label"] for e in document["benchmarks"]}
        self.assertTrue(labels[TUNED_NAME].endswith("(database)"), labels[TUNED_NAME])
        names = {b["name"] for b in summary["benchmarks"]}
        # The untuned default runs next to it exactly when it is another config.
        self.assertEqual(TUNED_NAME + "/default" in names, best != default, names)
        if best != default:
            untuned = self.item(summary, TUNED_NAME + "/default")
            self.assertEqual((untuned["role"], untuned["config_source"], untuned["config"]),
                             ("default", "default", default))
        stored = self.query("SELECT config_source, config FROM bench_results WHERE name = ?", (TUNED_NAME,))
        self.assertEqual(stored[0][0], "database")
        self.assertEqual(json.loads(stored[0][1]), best)

        # Another shape, never tuned: the nearest tuned one's config, saying where it came from.
        summary, _ = self.bench("-k", "rmsnorm", "--shape", "rows=128,cols=256", out="other.json")
        nearest = self.item(summary, "rmsnorm/cpu/rows=128,cols=256/fp32")
        self.assertEqual(nearest["config_source"], "database, tuned at rows=64 cols=256 fp32")
        self.assertEqual(nearest["config"], best)

    def header_answer(self, tuned_dir, table_entry, rows, cols):
        """What the generated header's own lookup_entry() gives on this device (tests/consumer/consumer.cpp
        built against tuned_dir/cpu/rmsnorm.hpp): {level, config..., tuned_rows, tuned_cols}."""
        consumer = self.path("consumer")
        if not os.path.exists(consumer):
            subprocess.run([harness.ARGS.cxx, "-std=c++20", "-I", tuned_dir,
                            os.path.join(harness.ARGS.source_dir, "tests", "consumer", "consumer.cpp"),
                            "-o", consumer], check=True)
        device = table_entry["device"]
        said = subprocess.run([consumer, "--backend", "cpu", "--device", device["name"],
                               "--architecture", device["architecture"], "--vendor", device["vendor"],
                               "--rows", str(rows), "--cols", str(cols)], capture_output=True, text=True, check=True)
        return dict(word.split("=", 1) for word in said.stdout.split())

    def test_tuned_config_from_generated_tables_by_the_headers_rule(self):
        generated = self.path("generated")
        tune = self.tune("--shape", SHAPE, "--export-dir", generated)
        self.tune("--shape", "rows=1024,cols=256", "--export-dir", generated)  # exports both shapes
        with open(self.path("generated/cpu/rmsnorm.json")) as f:
            table = json.load(f)
        self.assertEqual(len(table["entries"]), 2)
        # A fresh database: the config can only have come from the generated table. For each shape
        # bench runs the config the header's lookup gives, and says which tuned shape it came from:
        # the exact one, else the nearest (rows=128 is 2x from 64 and 8x from 1024).
        expected = {SHAPE: ("header", 64), "rows=128,cols=256": ("header, tuned at rows=64 cols=256 fp32", 64),
                    "rows=768,cols=256": ("header, tuned at rows=1024 cols=256 fp32", 1024)}
        for shape, (source, tuned_rows) in expected.items():
            with self.subTest(shape=shape):
                rows = int(shape.split(",")[0].split("=")[1])
                summary, document = self.bench("-k", "rmsnorm", "--shape", shape, "--tuned", generated,
                                               "--no-baseline", db=self.path("fresh.db"), out=f"{rows}.json")
                tuned = self.item(summary, f"rmsnorm/cpu/{shape}/fp32")
                self.assertEqual(tuned["config_source"], source)
                self.assertEqual(tuned["tuned_at"], {"family": "rmsnorm", "dims": {"rows": tuned_rows, "cols": 256},
                                                     "precision": "fp32"})
                header = self.header_answer(generated, table["entries"][0], rows, 256)
                self.assertEqual(header["level"], "device")
                self.assertEqual(int(header["tuned_rows"]), tuned_rows)
                self.assertEqual({k: str(v) for k, v in tuned["config"].items()},
                                 {k: header[k] for k in tuned["config"]})
                if shape == SHAPE:
                    self.assertEqual(tuned["config"], tune["best"]["config"])
                labels = {e["run_name"]: e["label"] for e in document["benchmarks"]}
                self.assertTrue(labels[f"rmsnorm/cpu/{shape}/fp32"].endswith(f"({source})"))

        # Tuned on another CPU of the same architecture: the header's next level answers, and says so.
        for entry in table["entries"]:
            entry["device"]["name"] = "Other CPU"
        with open(self.path("generated/cpu/rmsnorm.json"), "w") as f:
            json.dump(table, f)
        shown = self.ktune("bench", "-b", "cpu", *FAST, "-k", "rmsnorm", "--shape", SHAPE, "--tuned", generated,
                           "--no-baseline", "--out", self.path("other.json"), "--db", self.path("fresh.db"), check=0)
        self.assertIn("[header, architecture match (tuned on Other CPU)]", shown.stdout)

    def test_untuned_problem_runs_the_default_once(self):
        summary, document = self.bench("-k", "rmsnorm", "--shape", SHAPE)
        tuned = self.item(summary, TUNED_NAME)
        self.assertEqual(tuned["config_source"], "default")
        self.assertEqual(tuned["config"], self.space_default())
        names = set(by_run_name(document))
        self.assertNotIn(TUNED_NAME + "/default", names)  # the same config: timed once
        self.assertEqual(names, {TUNED_NAME, tuned["baseline"]})
        # Without the baseline only the kernel itself runs, and no percentage is claimed.
        summary, document = self.bench("-k", "rmsnorm", "--shape", SHAPE, "--no-baseline", out="alone.json")
        self.assertEqual(set(by_run_name(document)), {TUNED_NAME})
        self.assertTrue(all("percent_of_baseline" not in e for e in document["benchmarks"]))

    def test_history_accumulates(self):
        first, _ = self.bench("-k", "rmsnorm", "--shape", SHAPE)
        second, _ = self.bench("-k", "rmsnorm", "--shape", SHAPE, out="again.json")
        runs = self.query("SELECT id, status FROM bench_runs ORDER BY id")
        self.assertEqual(runs, [(first["bench_run_id"], "finished"), (second["bench_run_id"], "finished")])
        self.assertNotEqual(first["bench_run_id"], second["bench_run_id"])
        per_run = self.query("SELECT bench_run_id, COUNT(*) FROM bench_results GROUP BY bench_run_id ORDER BY 1")
        self.assertEqual(per_run, [(first["bench_run_id"], len(first["benchmarks"])),
                                   (second["bench_run_id"], len(second["benchmarks"]))])

    def test_a_suite_file_runs_its_shapes_in_file_order(self):
        suite = self.path("mini.json")
        with open(suite, "w") as f:
            json.dump({"suite": "mini", "precisions": ["fp32"],
                       "shapes": {"softmax": [{"rows": 32, "cols": 128}], "rmsnorm": [{"rows": 32, "cols": 128}]}}, f)
        summary, document = self.bench("--suite", suite, "--no-baseline", "--no-default")
        self.assertEqual([b["name"] for b in summary["benchmarks"]],
                         ["softmax/cpu/rows=32,cols=128/fp32", "rmsnorm/cpu/rows=32,cols=128/fp32"])
        self.assertEqual(document["context"]["suite"], "mini")
        self.assertEqual(self.query("SELECT suite FROM bench_runs"), [("mini",)])
        # --kernel picks from the suite.
        summary, _ = self.bench("--suite", suite, "--no-baseline", "-k", "rmsnorm", out="one.json")
        self.assertEqual([b["name"] for b in summary["benchmarks"]], ["rmsnorm/cpu/rows=32,cols=128/fp32"])

    def test_bad_input_exits_2_before_the_device_opens(self):
        typo = self.path("typo.json")
        with open(typo, "w") as f:
            json.dump({"suite": "typo", "precisions": ["fp32"], "shapes": {"rmsnorm": [{"rows": 64, "colz": 256}]}}, f)
        out = self.path("out.json")
        cases = [
            (["--suite", "nosuch", "--out", out], ["no suite named 'nosuch'", "valid suites: transformer, transformer_cpu"]),
            (["--suite", typo, "--out", out], [typo, '"shapes"."rmsnorm"[0]', "'colz'"]),
            (["--shape", SHAPE, "--out", out], ["--shape needs --kernel"]),
            (["-k", "rmsnorm", "--shape", SHAPE, "--out", self.path("missing/out.json")],
             ["--out", "does not exist", self.path("missing")]),
            (["-k", "rmsnorm", "--suite", "transformer_cpu", "--shape", SHAPE, "--out", out], ["--suite and --shape"]),
            (["-k", "rmsnorm", "--shape", SHAPE], ["--out is required"]),
            (["-k", "rmsnorm", "--shape", SHAPE, "--out", self.dir], ["is a directory"]),
            (["-k", "rmsnorm", "--shape", SHAPE, "--out", out, "--tuned", self.path("nodir")], ["--tuned"]),
            (["-k", "rmsnorm", "--shape", "rows=64,colz=256", "--out", out], ["'colz'"]),
            (["-k", "rmsnrom", "--shape", SHAPE, "--out", out], ["unknown kernel 'rmsnrom'"]),
            (["-k", "rmsnorm", "--shape", SHAPE, "--out", out, "--repetitions", "0"], ["--repetitions"]),
        ]
        for args, fragments in cases:
            with self.subTest(args=args):
                result = self.ktune("bench", "-b", "cpu", "--db", self.db, *args, check=2)
                for fragment in fragments:
                    self.assertIn(fragment, result.stderr)
                self.assertFalse(os.path.exists(self.db), "a refused bench must not leave a database behind")
                self.assertFalse(os.path.exists(out))
        # --json: one parseable error document.
        result = self.ktune("bench", "-b", "cpu", "--suite", "nosuch", "--out", out, "--json", check=2)
        self.assertIn("nosuch", json.loads(result.stdout)["error"])

    def test_ctrl_c_keeps_the_finished_benchmarks(self):
        suite = self.path("slow.json")
        shapes = [{"rows": rows, "cols": 2048} for rows in (256, 320, 384, 448)]
        with open(suite, "w") as f:
            json.dump({"suite": "slow", "precisions": ["fp32"], "shapes": {"rmsnorm": shapes}}, f)
        out = self.path("out.json")
        # About 0.2 s per repetition: a whole run would take several seconds, and the interrupt
        # lands in the middle of the second benchmark's repetitions.
        process = subprocess.Popen(
            [harness.ARGS.ktune, "bench", "-b", "cpu", "--suite", suite, "--out", out, "--db", self.db,
             "--repetitions", "3", "--max-seconds-per-repetition", "0.2", "--max-noise", "0",
             "--min-samples", "100000"],
            cwd=self.dir, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
        try:
            first = None
            for line in process.stdout:
                if line.startswith("  "):  # a finished benchmark
                    first = line.split()[0]
                    break
            self.assertIsNotNone(first, "no benchmark line before the end of output")
            time.sleep(0.3)  # into the next benchmark's repetitions
            started = time.time()
            os.killpg(process.pid, signal.SIGINT)  # like Ctrl-C in a terminal: ktune's process group
            rest, err = process.communicate(timeout=60)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
        self.assertEqual(process.returncode, 130, err)
        self.assertLess(time.time() - started, 3, "Ctrl-C must stop after the repetition in flight")
        self.assertIn("wrote", rest)

        with open(out) as f:
            document = json.load(f)
        grouped = by_run_name(document)
        self.assertIn(first, grouped)
        self.assertLess(len(grouped), 8, "the bench was meant to be interrupted, not to finish")
        for name, group in grouped.items():
            # Only whole benchmarks: one cut short would pass for a full run in ktune compare.
            self.assertEqual([e["repetition_index"] for e in group["iteration"]], [0, 1, 2], name)
            self.assertTrue(all(e["repetitions"] == 3 for e in group["iteration"]), name)
        self.assertEqual(self.query("SELECT status FROM bench_runs"), [("interrupted",)])
        stored = self.query("SELECT name, repetitions_ns FROM bench_results")
        self.assertEqual(sorted(name for name, _ in stored), sorted(grouped))
        self.assertTrue(all(len(json.loads(samples)) == 3 for _, samples in stored))


if __name__ == "__main__":
    harness.main()
