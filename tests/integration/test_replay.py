#!/usr/bin/env python3
"""`ktune replay --json` checked against the recorded space itself: every evaluated key is a
record of the file, no run evaluates a config twice, each run's best is the fastest recorded
time among its evaluated keys, and the score follows the definition in shared/data/README.md.
The same space given as T4 results replays identically. A recording of part of its space, or a
tiny one, is replayed with a warning; times print in the unit that suits them."""
import gzip
import json
import math
import os
import sqlite3

import harness

SHARED = os.path.join("..", "shared", "data", "kernel_tuner_caches")


class Replay(harness.KtuneTestCase):
    def write_cache(self, name, times_ms):
        """A Kernel Tuner cache of one parameter x = 0, 1, ... timed `times_ms` (ms, as the files hold
        them), all of its tune_params recorded; returns its path."""
        xs = list(range(len(times_ms)))
        cache = {"device_name": "Test CPU", "kernel_name": "synthetic", "tune_params_keys": ["x"],
                 "tune_params": {"x": xs}, "objective": "time",
                 "cache": {str(x): {"x": x, "time": t, "times": [t]} for x, t in zip(xs, times_ms)}}
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            json.dump(cache, f)
        return path

    def test_times_print_in_the_unit_that_suits_them(self):
        # Microsecond kernels: the table says 2.10 us, not 0.0021 ms; the JSON stays in ms.
        cache = self.write_cache("us.json", [0.0021 + 0.0001 * x for x in range(120)])
        args = ["replay", "--cache", cache, "--budget", "6", "--repeats", "2", "--strategy", "random"]
        shown = self.ktune(*args, check=0).stdout
        header, row = shown.splitlines()[1:3]
        self.assertNotIn("(ms)", header)
        self.assertIn("optimum", header)
        self.assertIn("2.10 us", row)  # the optimum
        self.assertNotIn("0.0021", shown)
        self.assertAlmostEqual(self.ktune_json(*args)["optimum_ms"], 0.0021)

    def test_a_recording_of_part_of_its_space_warns_that_scores_are_for_the_subset(self):
        # A budgeted tune recorded 10 of its space's valid configs; the recording says how many the
        # space has, and replay says what the scores are worth.
        record = os.path.join(self.dir, "recorded")
        tune = self.tune_json("--kernel", "rmsnorm", "--backend", "cpu", "--shape", "rows=32,cols=512",
                               "--strategy", "random", "--budget", "10", "--db", self.db, "--no-export",
                               "--record", record, "--max-seconds-per-config", "0.02", "--min-samples", "3")
        valid = tune["space"]["valid"]
        self.assertGreater(valid, 10)
        percent = f"{100 * 10 / valid:.3g}%"
        for recorded in tune["recorded"]:  # the Kernel Tuner cache and the T4 results alike
            with self.subTest(recorded=os.path.basename(recorded)):
                args = ["replay", "--cache", recorded, "--budget", "3", "--repeats", "2"]
                coverage = self.ktune_json(*args)["coverage"]
                self.assertEqual((coverage["recorded"], coverage["space"]), (10, valid))
                self.assertIn(f"covers 10 of {valid} configs ({percent}) of its space: the scores are for the "
                              "recorded subset", coverage["warning"])
                self.assertIn("records only 10 configs", coverage["warning"])
                shown = self.ktune(*args, check=0)
                self.assertIn(f": covers 10 of {valid} configs ({percent}), 2 repeats", shown.stdout.splitlines()[0])
                self.assertIn("ktune: warning: " + recorded + f" covers 10 of {valid}", shown.stderr)
                # A budget above the recorded configs would score every strategy 1: refused.
                refused = self.ktune("replay", "--cache", recorded, "--budget", "11", check=2)
                self.assertIn(f"--budget 11: {recorded} records only 10 configs", refused.stderr)

    def test_a_tiny_cache_warns_and_a_large_one_does_not(self):
        tiny = self.ktune_json("replay", "--cache", self.write_cache("tiny.json", [1.0 + x for x in range(30)]),
                               "--budget", "3", "--repeats", "2")["coverage"]
        self.assertEqual((tiny["recorded"], tiny["space"]), (30, None))  # a Kernel Tuner cache: size unknown
        self.assertIn("records only 30 configs, fewer than the 100", tiny["warning"])
        large = self.ktune("replay", "--cache", self.write_cache("large.json", [1.0 + x for x in range(120)]),
                           "--budget", "3", "--repeats", "2", "--json", check=0)
        self.assertEqual(json.loads(large.stdout)["coverage"], {"recorded": 120, "space": None, "warning": None})
        self.assertNotIn("warning", large.stderr)

    def shared(self, name):
        path = os.path.join(harness.ARGS.source_dir, SHARED, name)
        if not os.path.exists(path):
            self.skipTest(f"{path} is not beside this checkout")
        return os.path.abspath(path)

    def test_runs_match_the_recorded_times(self):
        cache_file = self.shared("convolution_milo_A4000.json.gz")
        cache = json.load(gzip.open(cache_file))["cache"]
        times = {key: record["time"] for key, record in cache.items() if isinstance(record["time"], float)}
        slowest = max(times.values())
        result = self.ktune_json("replay", "--cache", cache_file, "--budget", "40", "--repeats", "5",
                                 "--seed", "3")
        self.assertEqual(result["strategy"], "forest")  # the default, auto, without a prior
        self.assertEqual([run["seed"] for run in result["repeats"]], [3, 4, 5, 6, 7])
        optimum = min(times.values())
        self.assertAlmostEqual(result["optimum_ms"], optimum)
        scores = []
        for run in result["repeats"]:
            self.assertEqual(len(run["evaluated"]), 40)
            self.assertEqual(len(set(run["evaluated"])), 40)
            for key in run["evaluated"]:
                self.assertIn(key, cache)
            best = min(times.get(key, slowest) for key in run["evaluated"])
            self.assertAlmostEqual(run["best"], best)
            score = (best - result["random_expected_ms"]) / (optimum - result["random_expected_ms"])
            self.assertAlmostEqual(run["score"], score)
            scores.append(score)
        self.assertAlmostEqual(result["score"], sum(scores) / len(scores))

    def test_t4_results_replay_like_the_cache(self):
        args = ["--budget", "30", "--repeats", "3", "--strategy", "annealing"]
        from_cache = self.ktune_json("replay", "--cache", self.shared("convolution_milo_A100.json.gz"), *args)
        from_t4 = self.ktune_json("replay", "--cache", self.shared("convolution_milo_A100_T4.json.gz"), *args)
        self.assertEqual(from_cache["repeats"], from_t4["repeats"])
        self.assertEqual(from_cache["configs"], from_t4["configs"])

    def test_several_strategies_and_budgets(self):
        result = self.ktune_json("replay", "--cache", self.shared("dedispersion_milo_A100.json.gz"),
                                 "--strategy", "random", "--strategy", "differential_evolution",
                                 "--budget-fraction", "0.01", "--budget", "7", "--repeats", "2")
        self.assertNotIn("repeats", result)  # one result per strategy and budget, under "results"
        self.assertEqual(len(result["results"]), 4)
        for entry in result["results"]:
            self.assertEqual(len(entry["repeats"]), 2)
            self.assertIn(entry["budget"], (7, 111))
            self.assertTrue(math.isfinite(entry["score"]))

    def test_bad_input_exits_2(self):
        cache = self.shared("dedispersion_milo_A100.json.gz")
        self.assertIn("unknown strategy 'simplex'",
                      self.ktune("replay", "--cache", cache, "--strategy", "simplex", check=2).stderr)
        spec = self.shared("dedispersion_milo_T1.json")
        self.assertIn("not a Kernel Tuner cache", self.ktune("replay", "--cache", spec, check=2).stderr)

    def test_prior_configs_are_evaluated_first(self):
        cache_file = self.shared("convolution_milo_A4000.json.gz")
        prior_file = self.shared("convolution_milo_A100.json.gz")
        prior_cache = json.load(gzip.open(prior_file))["cache"]
        timed = [(record["time"], key) for key, record in prior_cache.items() if isinstance(record["time"], float)]
        prior_best = [key for _, key in sorted(timed)][:3]
        args = ["--cache", cache_file, "--budget", "40", "--repeats", "3", "--strategy", "forest"]
        with_prior = self.ktune_json("replay", *args, "--prior", prior_file)
        without = self.ktune_json("replay", *args)
        # A budget of 40 has a start-up of 6 configs (its square root), half of them from the prior.
        for run in with_prior["repeats"]:
            self.assertEqual(run["evaluated"][:3], prior_best)
            self.assertEqual(len(set(run["evaluated"])), 40)
        for run in without["repeats"]:
            self.assertNotEqual(run["evaluated"][:3], prior_best)
        self.assertEqual([p["file"] for p in with_prior["priors"]], [prior_file])
        self.assertEqual(with_prior["prior_configs_valid"], with_prior["prior_configs"])
        self.assertEqual(without["priors"], [])

    def test_the_closest_problems_prior_comes_first(self):
        # Two prior files of the same kernel, one at the target's problem size and one at 16x it,
        # with different best configs: whatever their order on the command line, the best of the
        # one at the target's size is the first config evaluated.
        target = self.shared("convolution_milo_A100.json.gz")
        source = json.load(gzip.open(self.shared("convolution_milo_A4000.json.gz")))
        size = json.load(gzip.open(target))["problem_size"]

        def write(name, problem_size, reverse):
            cache = dict(source, problem_size=problem_size)
            records = {k: dict(r) for k, r in source["cache"].items()}
            timed = sorted(k for k, r in records.items() if isinstance(r["time"], float))
            if reverse:  # another best: the times handed out in the opposite key order
                times = sorted(records[k]["time"] for k in timed)
                for key, time in zip(timed, times):
                    records[key]["time"] = time
            cache["cache"] = records
            path = os.path.join(self.dir, name)
            with gzip.open(path, "wt") as f:
                json.dump(cache, f)
            best = min((r["time"], k) for k, r in records.items() if isinstance(r["time"], float))[1]
            return path, best

        near, near_best = write("near.json.gz", size, False)
        far, far_best = write("far.json.gz", [v * 16 for v in size], True)
        self.assertNotEqual(near_best, far_best)
        args = ["--cache", target, "--budget", "20", "--repeats", "1"]
        for order in ([far, near], [near, far]):
            prior_args = [a for p in order for a in ("--prior", p)]
            run = self.ktune_json("replay", *args, *prior_args)["repeats"][0]
            self.assertEqual(run["evaluated"][0], near_best, f"prior order {order}")
            self.assertEqual(run["evaluated"][1], far_best, f"prior order {order}")

    def recorded(self, name):
        return os.path.join(harness.ARGS.source_dir, "reports", "h200-search", "heldout-2026-11-26c", name)

    def space_with_starting_points(self, family_file, points):
        with open(os.path.join(harness.ARGS.source_dir, "search_spaces", family_file)) as f:
            space = json.load(f)
        space["starting_points"] = points
        path = os.path.join(self.dir, family_file)
        with open(path, "w") as f:
            json.dump(space, f)
        return path

    def test_starting_points_are_evaluated_after_the_prior(self):
        # Two configs of the recorded space, neither among its fastest, as the family's starting
        # points; a prior space of the same kernel goes before them, as in ktune tune.
        cache_file = self.recorded("rmsnorm.cuda.rows8192_cols8192.fp16.json.gz")
        cache = json.load(gzip.open(cache_file))
        names = cache["tune_params_keys"]
        timed = sorted((r["time"], k) for k, r in cache["cache"].items() if isinstance(r["time"], float))
        picks = [timed[len(timed) // 3][1], timed[len(timed) // 2][1]]
        points = [{n: cache["cache"][key][n] for n in names} for key in picks]
        space_file = self.space_with_starting_points("rmsnorm.cuda.json", points)
        args = ["--cache", cache_file, "--budget", "40", "--repeats", "3", "--strategy", "forest"]
        runs = self.ktune_json("replay", *args, "--starting-points", space_file)
        self.assertEqual(runs["starting_points"], 2)
        for run in runs["repeats"]:
            self.assertEqual(run["evaluated"][:2], picks)
        for run in self.ktune_json("replay", *args)["repeats"]:
            self.assertNotEqual(run["evaluated"][:2], picks)
        # After a prior: a prior space holding one config of the kernel (another problem's best)
        # takes the first start-up slot, the starting points the next two.
        prior_cache = json.load(gzip.open(os.path.join(harness.ARGS.source_dir, "reports", "h200-search", "spaces",
                                                        "rmsnorm.cuda.rows16384_cols4096.bf16.json.gz")))
        prior_best = min((r["time"], k) for k, r in prior_cache["cache"].items() if isinstance(r["time"], float))[1]
        self.assertNotIn(prior_best, picks)
        prior_cache["cache"] = {prior_best: prior_cache["cache"][prior_best]}
        prior = os.path.join(self.dir, "one-config.json.gz")
        with gzip.open(prior, "wt") as f:
            json.dump(prior_cache, f)
        both = self.ktune_json("replay", *args, "--prior", prior, "--starting-points", space_file)
        self.assertEqual(both["prior_configs"], 3)
        for run in both["repeats"]:  # a budget of 40: a start-up of 6, 3 of them prior configs
            self.assertEqual(run["evaluated"][:3], [prior_best] + picks)

    def test_default_first_measures_the_spaces_default_before_the_strategy(self):
        # As ktune tune does: the family's default first in every run, counted in the budget,
        # never proposed again, and no prior config (a starting point equal to it is dropped).
        cache_file = self.recorded("rmsnorm.cuda.rows8192_cols8192.fp16.json.gz")
        cache = json.load(gzip.open(cache_file))
        names = cache["tune_params_keys"]
        with open(os.path.join(harness.ARGS.source_dir, "search_spaces", "rmsnorm.cuda.json")) as f:
            default = json.load(f)["default"]
        default_key = ",".join(str(default[n]) for n in names)
        self.assertIn(default_key, cache["cache"])
        other = next(k for k in cache["cache"] if k != default_key)
        space_file = self.space_with_starting_points(
            "rmsnorm.cuda.json", [default, {n: cache["cache"][other][n] for n in names}])
        args = ["--cache", cache_file, "--budget", "20", "--repeats", "3", "--starting-points", space_file]
        result = self.ktune_json("replay", *args, "--default-first")
        self.assertEqual(result["prior_configs"], 1)
        for run in result["repeats"]:
            self.assertEqual(run["evaluated"][:2], [default_key, other])
            self.assertEqual(len(run["evaluated"]), 20)
            self.assertEqual(run["evaluated"].count(default_key), 1)
        self.assertEqual(self.ktune_json("replay", *args)["prior_configs"], 2)
        self.assertIn("--default-first needs --starting-points",
                      self.ktune("replay", "--cache", cache_file, "--default-first", check=2).stderr)

    def test_starting_points_of_another_family_exit_2(self):
        cache_file = self.recorded("rmsnorm.cuda.rows8192_cols8192.fp16.json.gz")
        gemm = os.path.join(harness.ARGS.source_dir, "search_spaces", "gemm.cuda.json")
        result = self.ktune("replay", "--cache", cache_file, "--starting-points", gemm, check=2)
        self.assertIn("describes gemm, but", result.stderr)
        self.assertIn("measured rmsnorm", result.stderr)

    def test_tune_starts_from_the_spaces_starting_points(self):
        points = [{"threads": 1, "rows_per_task": 4, "vector_width": 16, "unroll": 2},
                  {"threads": 2, "rows_per_task": 8, "vector_width": 4, "unroll": 4}]
        default = {"threads": 1, "rows_per_task": 16, "vector_width": 8, "unroll": 1}
        # The default among them is left out of the prior: it is measured first anyway.
        space_file = self.space_with_starting_points("rmsnorm.cpu.json", [default] + points)
        fast = ["--backend", "cpu", "--kernel", "rmsnorm", "--shape", "rows=64,cols=1000", "--space", space_file,
                "--budget", "12", "--no-export", "--max-seconds-per-config", "0.05", "--min-samples", "5"]
        summary = self.tune_json(*fast, "--db", self.db)
        self.assertEqual(summary["prior_configs"], 2)
        self.assertEqual(summary["strategy"], "tpe")  # auto, with a prior
        self.assertEqual(summary["prior_sources"], {"files": 0, "database": 0, "starting_points": 2})
        order = [json.loads(c) for (c,) in self.query("SELECT config FROM measurements ORDER BY id")]
        # The family's default first (the speed-up baseline), then the starting points.
        self.assertEqual(order[0], default)
        self.assertEqual(order[1:3], points)
        shown = self.ktune("tune", *fast, "--db", os.path.join(self.dir, "shown.db")).stdout
        self.assertIn("search     tpe, starting from 2 prior configs valid here (of 2 starting points)", shown)
        off = self.tune_json(*fast, "--db", os.path.join(self.dir, "off.db"), "--no-prior")
        self.assertEqual(off["prior_configs"], 0)
        self.assertEqual(off["strategy"], "forest")
        self.assertIn("search     forest, from scratch",
                      self.ktune("tune", *fast, "--db", os.path.join(self.dir, "off2.db"), "--no-prior").stdout)
        (recorded,), = self.query("SELECT strategy FROM runs", db=os.path.join(self.dir, "off.db"))
        self.assertEqual(recorded, "forest")

    def test_a_prior_of_another_kernel_changes_nothing(self):
        # Its parameters are not this space's, so none of its configs is valid here.
        args = ["--cache", self.shared("convolution_milo_A4000.json.gz"), "--budget", "20", "--repeats", "2"]
        unrelated = self.ktune_json("replay", *args, "--prior", self.shared("dedispersion_milo_A100.json.gz"))
        self.assertEqual(unrelated["prior_configs_valid"], 0)
        self.assertEqual(unrelated["repeats"], self.ktune_json("replay", *args)["repeats"])

    def test_tune_offers_the_databases_other_problems_as_prior(self):
        fast = ["--backend", "cpu", "--budget", "6", "--db", self.db, "--no-export",
                "--max-seconds-per-config", "0.05", "--min-samples", "5"]
        first = self.tune_json("--kernel", "rmsnorm", "--shape", "rows=64,cols=1000", *fast)
        self.assertEqual(first["prior_configs"], 0)  # nothing measured before
        other = self.tune_json("--kernel", "rmsnorm", "--shape", "rows=32,cols=512", *fast)
        # The best of the first problem, unless that is the default, which is measured first anyway
        # (which config wins six short measurements is up to the machine).
        with open(os.path.join(harness.ARGS.source_dir, "search_spaces", "rmsnorm.cpu.json")) as f:
            default = json.load(f)["default"]
        self.assertEqual(other["prior_configs"], 0 if first["best"]["config"] == default else 1)
        off = self.tune_json("--kernel", "rmsnorm", "--shape", "rows=16,cols=256", "--no-prior", *fast)
        self.assertEqual(off["prior_configs"], 0)

    def test_tune_offers_other_kernels_with_the_same_parameters_after_its_own(self):
        # On the CPU, layernorm and residual_layernorm have the same parameters and values;
        # rmsnorm lacks their `stats`, so its configs are offered but none is valid there.
        fast = ["--backend", "cpu", "--budget", "6", "--db", self.db, "--no-export",
                "--max-seconds-per-config", "0.05", "--min-samples", "5"]
        self.tune_json("--kernel", "rmsnorm", "--shape", "rows=64,cols=1000", *fast)
        layernorm = self.tune_json("--kernel", "layernorm", "--shape", "rows=64,cols=1000", *fast)
        self.assertEqual((layernorm["prior_configs"], layernorm["prior_configs_valid"]), (1, 0))
        residual = self.tune_json("--kernel", "residual_layernorm", "--shape", "rows=64,cols=1000", *fast)
        self.assertEqual((residual["prior_configs"], residual["prior_configs_valid"]), (2, 1))
        # The layernorm best is the first thing residual_layernorm measures after its default.
        with sqlite3.connect(self.db) as db:
            best = db.execute(
                "SELECT m.config_key FROM measurements m JOIN kernels k ON k.id = m.kernel_id "
                "WHERE k.family = 'layernorm' AND m.outcome = 'ok' ORDER BY m.median_ns LIMIT 1").fetchone()[0]
            order = [key for (key,) in db.execute(
                "SELECT m.config_key FROM measurements m JOIN kernels k ON k.id = m.kernel_id "
                "WHERE k.family = 'residual_layernorm' ORDER BY m.id")]
        self.assertIn(best, order[:2])

    def test_tune_takes_recorded_spaces_as_prior(self):
        # A space recorded by one tune (another database, as on another machine) is the prior of
        # a tune of another shape: its fastest config is measured right after the default. Twice
        # the rows keeps every config of the recorded space valid (threads <= tasks).
        fast = ["--backend", "cpu", "--no-export", "--max-seconds-per-config", "0.05", "--min-samples", "5"]
        record = os.path.join(self.dir, "recorded")
        self.tune_json("--kernel", "rmsnorm", "--shape", "rows=32,cols=512", "--strategy", "random",
                        "--budget", "12", "--db", os.path.join(self.dir, "other.db"), "--record", record, *fast)
        [recorded] = [os.path.join(record, f) for f in os.listdir(record) if not f.endswith("_T4.json.gz")]
        cache = json.load(gzip.open(recorded))
        timed = sorted((r["time"], k) for k, r in cache["cache"].items() if isinstance(r.get("time"), float))
        best = dict(zip(cache["tune_params_keys"], timed[0][1].split(",")))

        tuned = self.tune_json("--kernel", "rmsnorm", "--shape", "rows=64,cols=1000", "--budget", "6",
                                "--db", self.db, "--prior", recorded, *fast)
        # 12 recorded, all ok (fewer than 16), the family's default among them (every tune measures
        # it first), which the prior leaves out for that reason.
        default = ",".join(str(v) for v in (1, 16, 8, 1))
        self.assertIn(default, [key for _, key in timed])
        self.assertEqual(tuned["prior_configs"], len(timed) - 1)
        self.assertEqual(tuned["prior_sources"]["files"], len(timed) - 1)
        order = [json.loads(c) for (c,) in self.query("SELECT config FROM measurements ORDER BY id")]
        self.assertIn(best, [{k: str(v) for k, v in c.items()} for c in order[:2]])

        # --prior and --no-prior contradict each other; a missing or malformed file is bad input.
        self.ktune("tune", "--kernel", "rmsnorm", "--prior", recorded, "--no-prior", "--db", self.db, *fast, check=2)
        self.ktune("tune", "--kernel", "rmsnorm", "--prior", "missing.json.gz", "--db", self.db, *fast, check=2)
        broken = os.path.join(self.dir, "broken.json")
        with open(broken, "w") as f:
            f.write("{}")
        self.assertIn("broken.json", self.ktune("tune", "--kernel", "rmsnorm", "--prior", broken, "--db", self.db,
                                                *fast, check=2).stderr)


if __name__ == "__main__":
    harness.main()
