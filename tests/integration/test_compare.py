"""`ktune compare BASE.json NEW.json` on Google Benchmark JSON files: a clear regression exits 1
and the table shows it; identical files and noise within the threshold exit 0; new and missing
benchmarks are listed; bad files exit 2 naming the path; --json prints one parseable document."""
import json
import os
import statistics

import harness


def google_benchmark_json(benchmarks, time_unit="ns"):
    """The JSON Google Benchmark writes for {name: [real time per repetition]}: one iteration
    entry per repetition followed by the mean, median and stddev aggregates."""
    entries = []
    for name, times in benchmarks.items():
        for index, time in enumerate(times):
            entries.append({"name": name, "family_index": 0, "per_family_instance_index": 0, "run_name": name,
                            "run_type": "iteration", "repetitions": len(times), "repetition_index": index,
                            "threads": 1, "iterations": 1000, "real_time": time, "cpu_time": time,
                            "time_unit": time_unit})
        if len(times) > 1:
            for aggregate, value in (("mean", statistics.mean(times)), ("median", statistics.median(times)),
                                     ("stddev", statistics.stdev(times))):
                entries.append({"name": f"{name}_{aggregate}", "run_name": name, "run_type": "aggregate",
                                "repetitions": len(times), "threads": 1, "aggregate_name": aggregate,
                                "aggregate_unit": "time", "iterations": len(times), "real_time": value,
                                "cpu_time": value, "time_unit": time_unit})
    return {"context": {"date": "2026-11-21T10:00:00+00:00", "host_name": "ci-runner", "executable": "./bench",
                        "num_cpus": 2, "library_build_type": "release"},
            "benchmarks": entries}


def spread(median, relative=0.01, count=10):
    """`count` repetitions around `median`, evenly spread over +-relative."""
    return [median * (1 - relative + 2 * relative * i / (count - 1)) for i in range(count)]


class Compare(harness.KtuneTestCase):
    def write(self, name, benchmarks, **kwargs):
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            json.dump(google_benchmark_json(benchmarks, **kwargs), f, indent=2)
        return path

    def table_row(self, stdout, name):
        rows = [line for line in stdout.splitlines() if line.split(" ")[0] == name]
        self.assertEqual(len(rows), 1, f"one row for {name} expected in:\n{stdout}")
        return rows[0]

    def test_clear_regression_exits_1_and_the_table_shows_it(self):
        base = self.write("base.json", {"BM_Softmax/4096": spread(100.0), "BM_Copy/1M": spread(250e3)})
        new = self.write("new.json", {"BM_Softmax/4096": spread(130.0), "BM_Copy/1M": spread(251e3)})
        result = self.ktune("compare", base, new, check=1)
        row = self.table_row(result.stdout, "BM_Softmax/4096")
        self.assertIn("+30.0%", row)
        self.assertIn("regression", row)
        self.assertIn("100.0 ns", row)
        self.assertIn("130.0 ns", row)
        copy_row = self.table_row(result.stdout, "BM_Copy/1M")
        self.assertIn("250.0 us", copy_row)
        self.assertTrue(copy_row.endswith("same"), copy_row)
        header = result.stdout.splitlines()[3]
        self.assertEqual(header.split(), ["benchmark", "old", "new", "change", "p", "verdict"])
        # The columns line up: each row's verdict starts where the header's does.
        self.assertEqual(row.index("regression"), header.index("verdict"))
        self.assertEqual(copy_row.index("same"), header.index("verdict"))
        self.assertIn("1 regression, 0 improvements, 1 same", result.stdout)
        self.assertIn("ci-runner", result.stdout)  # the context of each file is named

    def test_identical_files_exit_0(self):
        base = self.write("base.json", {"BM_a": spread(100.0), "BM_b": spread(5e6)})
        result = self.ktune("compare", base, base, check=0)
        self.assertIn("0 regressions, 0 improvements, 2 same", result.stdout)

    def test_noise_within_the_threshold_exits_0(self):
        # 3% slower with 2% noise: real perhaps, but under the default 5% threshold.
        base = self.write("base.json", {"BM_a": spread(100.0, relative=0.02)})
        new = self.write("new.json", {"BM_a": spread(103.0, relative=0.02)})
        result = self.ktune("compare", base, new, check=0)
        self.assertTrue(self.table_row(result.stdout, "BM_a").endswith("same"))
        # A tighter threshold makes the same files fail.
        self.ktune("compare", base, new, "--threshold", "1", check=1)

    def test_improvement_exits_0(self):
        base = self.write("base.json", {"BM_a": spread(2.0, count=8)}, time_unit="ms")
        new = self.write("new.json", {"BM_a": spread(1.5, count=8)}, time_unit="ms")
        result = self.ktune("compare", base, new, check=0)
        row = self.table_row(result.stdout, "BM_a")
        self.assertIn("-25.0%", row)
        self.assertIn("improvement", row)
        self.assertIn("2.000 ms", row)

    def test_new_and_missing_benchmarks_are_listed(self):
        base = self.write("base.json", {"BM_kept": spread(10.0), "BM_removed": spread(10.0)})
        new = self.write("new.json", {"BM_kept": spread(10.0), "BM_added": spread(10.0)})
        result = self.ktune("compare", base, new, check=0)
        out = result.stdout
        self.assertIn(f"new benchmarks (only in {new}):\n  BM_added\n", out)
        self.assertIn(f"missing benchmarks (only in {base}):\n  BM_removed\n", out)
        self.assertIn("1 new, 1 missing", out)

    def test_single_runs_are_judged_by_the_threshold_alone(self):
        base = self.write("base.json", {"BM_a": [100.0], "BM_b": [100.0]})
        new = self.write("new.json", {"BM_a": [120.0], "BM_b": [102.0]})
        result = self.ktune("compare", base, new, check=1)
        self.assertIn("regression (too few repetitions: 1 vs 1, judged by the threshold alone)",
                      self.table_row(result.stdout, "BM_a"))
        self.assertIn("same (too few repetitions", self.table_row(result.stdout, "BM_b"))

    def test_real_google_benchmark_output(self):
        sample = os.path.join(harness.ARGS.source_dir, "tests", "data", "google_benchmark_1.7.1.json")
        result = self.ktune("compare", sample, sample, check=0)
        self.table_row(result.stdout, "BM_Accumulate/256")
        self.assertIn("not measured (the run reported an error or a skip):\n"
                      "  BM_NeedsADevice: base: error: no device; new: error: no device\n", result.stdout)

    def test_json_output(self):
        base = self.write("base.json", {"BM_slow": spread(100.0), "BM_same": spread(50.0), "BM_gone": [1.0]})
        new = self.write("new.json", {"BM_slow": spread(150.0), "BM_same": spread(50.0), "BM_new": [1.0]})
        result = self.ktune("compare", base, new, "--json", "--threshold", "7", check=1)
        document = json.loads(result.stdout)
        self.assertEqual(document["exit_code"], 1)
        self.assertEqual(document["threshold_percent"], 7)
        self.assertEqual(document["alpha"], 0.05)
        self.assertEqual(document["base"]["file"], base)
        self.assertEqual(document["base"]["context"]["host_name"], "ci-runner")
        by_name = {b["name"]: b for b in document["benchmarks"]}
        self.assertEqual(set(by_name), {"BM_slow", "BM_same"})
        slow = by_name["BM_slow"]
        self.assertEqual(slow["verdict"], "regression")
        self.assertAlmostEqual(slow["change"], 0.5, places=9)
        self.assertAlmostEqual(slow["base_median_ns"], 100.0, places=6)
        self.assertEqual(slow["base_samples"], 10)
        self.assertLess(slow["p_value"], 0.05)
        self.assertTrue(slow["exact_p"])
        self.assertTrue(slow["significance_tested"])
        self.assertEqual(by_name["BM_same"]["verdict"], "same")
        self.assertEqual(document["new_benchmarks"], ["BM_new"])
        self.assertEqual(document["missing_benchmarks"], ["BM_gone"])
        self.assertEqual(document["summary"], {"regressions": 1, "improvements": 0, "same": 1,
                                               "judged_by_threshold_alone": 0})

    def test_bad_files_exit_2_naming_the_path(self):
        good = self.write("good.json", {"BM_a": spread(10.0)})
        missing = os.path.join(self.dir, "no-such.json")
        result = self.ktune("compare", good, missing, check=2)
        self.assertIn(missing, result.stderr)
        self.assertIn("no such file", result.stderr)

        broken = os.path.join(self.dir, "broken.json")
        with open(broken, "w") as f:
            f.write('{"benchmarks": [\n  {"name": "BM_a",\n')
        result = self.ktune("compare", broken, good, check=2)
        self.assertIn(f"{broken}: not valid JSON", result.stderr)

        wrong_unit = self.write("unit.json", {"BM_a": spread(10.0)}, time_unit="fortnights")
        result = self.ktune("compare", good, wrong_unit, check=2)
        self.assertIn(wrong_unit, result.stderr)
        self.assertIn("(BM_a)", result.stderr)
        self.assertIn('unknown "time_unit" "fortnights"', result.stderr)

        not_benchmarks = os.path.join(self.dir, "space.json")
        with open(not_benchmarks, "w") as f:
            json.dump({"family": "rmsnorm", "parameters": []}, f)
        result = self.ktune("compare", not_benchmarks, good, check=2)
        self.assertIn(f'{not_benchmarks}: no "benchmarks" array', result.stderr)

        result = self.ktune("compare", good, missing, "--json", check=2)
        document = json.loads(result.stdout)
        self.assertEqual(document["exit_code"], 2)
        self.assertIn(missing, document["error"])

    def test_bad_options_exit_2(self):
        good = self.write("good.json", {"BM_a": spread(10.0)})
        for option, value in (("--threshold", "-1"), ("--threshold", "nan"), ("--threshold", "lots"),
                              ("--alpha", "0"), ("--alpha", "1.5"), ("--alpha", "nan")):
            result = self.ktune("compare", good, good, option, value, check=2)
            self.assertIn(option, result.stderr, f"{option} {value}")
        self.ktune("compare", good, check=2)  # NEW.json missing

    def test_help_explains_the_test_and_exit_codes(self):
        result = self.ktune("compare", "--help", check=0)
        for fragment in ("Mann-Whitney U", "--threshold", "--alpha", "too few repetitions", "Exit codes"):
            self.assertIn(fragment, result.stdout)


if __name__ == "__main__":
    harness.main()
