"""`ktune compare BASE.json NEW.json` on Google Benchmark JSON files: a clear regression exits 1
and the table shows it; identical files and noise within the threshold exit 0; new and missing
benchmarks are listed; bad files exit 2 naming the path; --json prints one parseable document.
As a CI gate: files with no name in common (or a --filter that keeps nothing) fail, a partial
overlap and runs from different devices are warned about, and --fail-on-missing,
--fail-on-device-mismatch and --filter narrow or harden the check."""
import json
import os
import statistics

import harness


GOOGLE_BENCHMARK_CONTEXT = {"date": "2026-11-21T10:00:00+00:00", "host_name": "ci-runner", "executable": "./bench",
                            "num_cpus": 2, "library_build_type": "release"}

# What `ktune bench` adds to the context to name its device (tuner/bench/bench_session.cpp).
H100_CONTEXT = {"backend": "cuda", "device": "NVIDIA H100 80GB HBM3",
                "device_fingerprint": "cuda|NVIDIA H100 80GB HBM3|sm_90|sms=132"}
A100_CONTEXT = {"backend": "cuda", "device": "NVIDIA A100-SXM4-80GB",
                "device_fingerprint": "cuda|NVIDIA A100-SXM4-80GB|sm_80|sms=108"}

# The keys of compare's --json whatever the outcome (bad input aside).
JSON_KEYS = {"base", "new", "threshold_percent", "alpha", "benchmarks", "new_benchmarks", "missing_benchmarks",
             "not_measured", "summary", "compared", "regressions", "improvements", "only_in_baseline",
             "only_in_new", "filter", "device_mismatch", "warnings", "failed_checks", "exit_code"}


def google_benchmark_json(benchmarks, time_unit="ns", context=None, errors=()):
    """The JSON Google Benchmark writes for {name: [real time per repetition]}: one iteration
    entry per repetition followed by the mean, median and stddev aggregates. `context` adds to
    (or replaces) the context's fields; each name in `errors` is a run that reported an error."""
    entries = [{"name": name, "run_name": name, "run_type": "iteration", "repetitions": 1, "repetition_index": 0,
                "threads": 1, "iterations": 0, "real_time": 0, "cpu_time": 0, "time_unit": time_unit,
                "error_occurred": True, "error_message": "no device"} for name in errors]
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
    return {"context": {**GOOGLE_BENCHMARK_CONTEXT, **(context or {})}, "benchmarks": entries}


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

    def test_help_explains_the_test_gating_and_exit_codes(self):
        result = self.ktune("compare", "--help", check=0)
        for fragment in ("Mann-Whitney U", "--threshold", "--alpha", "too few repetitions", "Exit codes",
                         "--filter REGEX", "ECMAScript", "--fail-on-missing", "--fail-on-device-mismatch",
                         "nothing compared", "device_fingerprint", "failed_checks", "1 a check failed"):
            self.assertIn(fragment, result.stdout)

    def stderr_lines(self, result, prefix):
        return [line for line in result.stderr.splitlines() if line.startswith(prefix)]

    def test_disjoint_files_fail_naming_both_sides(self):
        # The wrong baseline (another suite's file): no pair at all, which must not read as a pass.
        base = self.write("base.json", {"BM_a": spread(10.0), "BM_b": spread(10.0)})
        new = self.write("new.json", {"rmsnorm/1": spread(10.0), "rmsnorm/2": spread(10.0),
                                      "rmsnorm/3": spread(10.0), "rmsnorm/4": spread(10.0)})
        result = self.ktune("compare", base, new, check=1)
        failed = self.stderr_lines(result, "ktune: check failed: ")
        self.assertEqual(len(failed), 1, result.stderr)
        self.assertIn("no benchmark name in common", failed[0])
        self.assertIn(f"{base}: 2 benchmarks (BM_a, BM_b)", failed[0])
        self.assertIn(f"{new}: 4 benchmarks (rmsnorm/1, rmsnorm/2, rmsnorm/3, ... (1 more))", failed[0])
        self.assertIn("nothing was compared", failed[0])
        self.assertIn("nothing compared: no benchmark has times in both files", result.stdout)
        # Disjoint files fail; they are not merely warned about as a partial overlap.
        self.assertEqual(self.stderr_lines(result, "ktune: warning: "), [])

        document = json.loads(self.ktune("compare", base, new, "--json", check=1).stdout)
        self.assertEqual(document["exit_code"], 1)
        self.assertEqual(document["compared"], 0)
        self.assertEqual(document["only_in_baseline"], ["BM_a", "BM_b"])
        self.assertEqual(document["only_in_new"], ["rmsnorm/1", "rmsnorm/2", "rmsnorm/3", "rmsnorm/4"])
        self.assertEqual([c["check"] for c in document["failed_checks"]], ["nothing_compared"])
        self.assertIn("no benchmark name in common", document["failed_checks"][0]["message"])

    def test_a_file_without_benchmarks_fails(self):
        base = self.write("base.json", {"BM_a": spread(10.0)})
        empty = self.write("empty.json", {})
        result = self.ktune("compare", base, empty, check=1)
        self.assertIn(f"{empty} has no benchmarks", result.stderr)
        result = self.ktune("compare", empty, empty, check=1)
        self.assertIn(f"{empty} and {empty} have no benchmarks", result.stderr)

    def test_common_benchmarks_that_were_never_measured_fail(self):
        # Both runs failed on every shared benchmark (no GPU on the runner): nothing was timed.
        base = self.write("base.json", {}, errors=["BM_gpu"])
        new = self.write("new.json", {}, errors=["BM_gpu"])
        result = self.ktune("compare", base, new, check=1)
        self.assertIn("1 benchmark in both files reported an error or a skip", result.stderr)
        self.assertIn("(BM_gpu)", result.stderr)
        # One measured pair beside a failed one is a comparison: the failure is listed, not fatal.
        base = self.write("base2.json", {"BM_cpu": spread(10.0)}, errors=["BM_gpu"])
        new = self.write("new2.json", {"BM_cpu": spread(10.0)}, errors=["BM_gpu"])
        self.ktune("compare", base, new, check=0)

    def test_partial_overlap_warns_with_counts_and_names(self):
        base = self.write("base.json", {"BM_kept": spread(10.0), "BM_gone1": spread(10.0), "BM_gone2": spread(10.0)})
        new = self.write("new.json", {"BM_kept": spread(10.0), "BM_added": spread(10.0)})
        result = self.ktune("compare", base, new, check=0)
        warnings = self.stderr_lines(result, "ktune: warning: ")
        self.assertEqual(len(warnings), 1, result.stderr)
        self.assertIn("overlap only in part", warnings[0])
        self.assertIn(f"2 benchmarks only in {base} (BM_gone1, BM_gone2)", warnings[0])
        self.assertIn(f"1 benchmark only in {new} (BM_added)", warnings[0])
        self.assertIn("0 regressions, 0 improvements, 1 same; 1 new, 2 missing", result.stdout)

        document = json.loads(self.ktune("compare", base, new, "--json", check=0).stdout)
        self.assertEqual(document["compared"], 1)
        self.assertEqual(document["only_in_baseline"], ["BM_gone1", "BM_gone2"])
        self.assertEqual(document["only_in_new"], ["BM_added"])
        self.assertEqual(document["failed_checks"], [])
        self.assertEqual(len(document["warnings"]), 1)
        self.assertIn("overlap only in part", document["warnings"][0])

        # The same names on both sides: no warning at all.
        self.assertEqual(self.ktune("compare", base, base, check=0).stderr, "")

    def test_fail_on_missing_lists_what_the_new_run_lacks(self):
        base = self.write("base.json", {"BM_kept": spread(10.0), "BM_gone1": spread(10.0), "BM_gone2": spread(10.0)})
        new = self.write("new.json", {"BM_kept": spread(10.0), "BM_added": spread(10.0)})
        result = self.ktune("compare", base, new, "--fail-on-missing", check=1)
        failed = self.stderr_lines(result, "ktune: check failed: ")
        self.assertEqual(failed, [f"ktune: check failed: --fail-on-missing: 2 benchmarks of {base} missing from "
                                  f"{new}: BM_gone1, BM_gone2"])
        document = json.loads(self.ktune("compare", base, new, "--fail-on-missing", "--json", check=1).stdout)
        self.assertEqual([c["check"] for c in document["failed_checks"]], ["missing"])
        self.assertEqual(document["exit_code"], 1)
        # A benchmark only added is not missing: the reverse direction passes.
        self.ktune("compare", new, self.write("more.json", {"BM_kept": spread(10.0), "BM_added": spread(10.0),
                                                           "BM_extra": spread(10.0)}), "--fail-on-missing", check=0)

    def test_filter_keeps_matching_names_on_both_sides(self):
        base = self.write("base.json", {"rmsnorm/256": spread(100.0), "softmax/256": spread(100.0),
                                        "softmax/gone": spread(1.0)})
        new = self.write("new.json", {"rmsnorm/256": spread(150.0), "softmax/256": spread(100.0),
                                      "swiglu/new": spread(1.0)})
        self.ktune("compare", base, new, check=1)  # the rmsnorm regression
        # Searched, not anchored: "max/2" finds softmax/256 only; what it leaves out is not "missing".
        result = self.ktune("compare", base, new, "--filter", "max/2", "--fail-on-missing", check=0)
        self.assertIn("0 regressions, 0 improvements, 1 same; 0 new, 0 missing", result.stdout)
        self.assertIn("--filter 'max/2'", result.stdout)
        self.assertNotIn("rmsnorm/256", result.stdout)
        self.assertEqual(result.stderr, "")
        result = self.ktune("compare", base, new, "--filter", "^(rms|swi)", check=1)
        self.assertIn("regression", self.table_row(result.stdout, "rmsnorm/256"))
        self.assertIn("1 new, 0 missing", result.stdout)

        document = json.loads(self.ktune("compare", base, new, "--filter", "^softmax/", "--json", check=0).stdout)
        self.assertEqual(document["filter"], "^softmax/")
        self.assertEqual([b["name"] for b in document["benchmarks"]], ["softmax/256"])
        self.assertEqual(document["only_in_baseline"], ["softmax/gone"])
        self.assertIsNone(json.loads(self.ktune("compare", base, base, "--json", check=0).stdout)["filter"])

    def test_a_filter_that_matches_nothing_fails(self):
        base = self.write("base.json", {"rmsnorm/256": spread(100.0), "softmax/256": spread(100.0)})
        result = self.ktune("compare", base, base, "--filter", "^gemm/", check=1)
        self.assertIn("--filter '^gemm/' matches no benchmark name in either file", result.stderr)
        self.assertIn(f"{base}: 2 benchmarks (rmsnorm/256, softmax/256)", result.stderr)
        document = json.loads(self.ktune("compare", base, base, "--filter", "^gemm/", "--json", check=1).stdout)
        self.assertEqual(document["compared"], 0)
        self.assertEqual(document["filter"], "^gemm/")
        self.assertEqual([c["check"] for c in document["failed_checks"]], ["nothing_compared"])
        # Matching on one side only is the disjoint case, said with the filter.
        new = self.write("new.json", {"gemm/256": spread(100.0)})
        result = self.ktune("compare", base, new, "--filter", "256", check=1)
        self.assertIn("no benchmark name in common matching --filter '256'", result.stderr)

    def test_a_malformed_filter_is_bad_input(self):
        good = self.write("good.json", {"BM_a": spread(10.0)})
        for pattern in ("(", "[a-", "a{2,1}", "*x"):
            result = self.ktune("compare", good, good, "--filter", pattern, check=2)
            self.assertIn(f"--filter: '{pattern}' is not an ECMAScript regular expression", result.stderr)
        document = json.loads(self.ktune("compare", good, good, "--filter", "(", "--json", check=2).stdout)
        self.assertEqual(document["exit_code"], 2)
        self.assertIn("--filter", document["error"])

    def test_runs_from_different_devices_warn_and_can_fail(self):
        base = self.write("base.json", {"BM_a": spread(10.0)}, context=H100_CONTEXT)
        new = self.write("new.json", {"BM_a": spread(10.0)}, context=A100_CONTEXT)
        result = self.ktune("compare", base, new, check=0)
        warnings = self.stderr_lines(result, "ktune: warning: ")
        self.assertEqual(len(warnings), 1, result.stderr)
        self.assertIn("different machines", warnings[0])
        self.assertIn("device 'NVIDIA H100 80GB HBM3' vs 'NVIDIA A100-SXM4-80GB'", warnings[0])

        document = json.loads(self.ktune("compare", base, new, "--json", check=0).stdout)
        mismatch = document["device_mismatch"]
        self.assertEqual([f["field"] for f in mismatch["fields"]], ["device", "device_fingerprint"])
        self.assertEqual(mismatch["fields"][0], {"field": "device", "base": "NVIDIA H100 80GB HBM3",
                                                 "new": "NVIDIA A100-SXM4-80GB"})
        self.assertIn(mismatch["description"], document["warnings"])

        result = self.ktune("compare", base, new, "--fail-on-device-mismatch", check=1)
        self.assertIn("ktune: check failed: --fail-on-device-mismatch: the two runs come from different machines "
                      "(device, device_fingerprint differ)", result.stderr)
        document = json.loads(self.ktune("compare", base, new, "--fail-on-device-mismatch", "--json", check=1).stdout)
        self.assertEqual([c["check"] for c in document["failed_checks"]], ["device_mismatch"])

        # The same GPU on another CI runner: the device is what counts, not the host.
        other_host = self.write("other-host.json", {"BM_a": spread(10.0)},
                                context={**H100_CONTEXT, "host_name": "ci-runner-7"})
        result = self.ktune("compare", base, other_host, "--fail-on-device-mismatch", check=0)
        self.assertEqual(result.stderr, "")
        document = json.loads(self.ktune("compare", base, other_host, "--json", check=0).stdout)
        self.assertIsNone(document["device_mismatch"])

        # Files of any other Google Benchmark program name only their host, which then counts.
        laptop = self.write("laptop.json", {"BM_a": spread(10.0)}, context={"host_name": "laptop"})
        plain = self.write("plain.json", {"BM_a": spread(10.0)})
        result = self.ktune("compare", plain, laptop, check=0)
        self.assertIn("host_name 'ci-runner' vs 'laptop'", result.stderr)

    def test_json_has_the_same_keys_whatever_the_outcome(self):
        base = self.write("base.json", {"BM_a": spread(100.0), "BM_b": spread(100.0)}, context=H100_CONTEXT)
        slower = self.write("slower.json", {"BM_a": spread(150.0)}, context=A100_CONTEXT)
        other = self.write("other.json", {"BM_z": spread(1.0)})
        outcomes = {
            "passed": ([base, base], 0),
            "regression, missing, other device": ([base, slower, "--fail-on-missing"], 1),
            "disjoint": ([base, other], 1),
            "filter matches nothing": ([base, base, "--filter", "nothing"], 1),
        }
        for outcome, (args, code) in outcomes.items():
            document = json.loads(self.ktune("compare", *args, "--json", check=code).stdout)
            self.assertEqual(set(document), JSON_KEYS, outcome)
            self.assertEqual(document["exit_code"], code, outcome)
        document = json.loads(self.ktune("compare", base, slower, "--fail-on-missing", "--json", check=1).stdout)
        self.assertEqual(document["regressions"], ["BM_a"])
        self.assertEqual(document["improvements"], [])
        self.assertEqual(document["only_in_baseline"], ["BM_b"])
        self.assertEqual(document["missing_benchmarks"], ["BM_b"])  # the older key stays
        self.assertEqual([c["check"] for c in document["failed_checks"]], ["regression", "missing"])
        self.assertIsNotNone(document["device_mismatch"])



if __name__ == "__main__":
    harness.main()
