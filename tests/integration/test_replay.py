#!/usr/bin/env python3
"""`ktune replay --json` checked against the recorded space itself: every evaluated key is a
record of the file, no run evaluates a config twice, each run's best is the fastest recorded
time among its evaluated keys, and the score follows the definition in shared/data/README.md.
The same space given as T4 results replays identically."""
import gzip
import json
import math
import os

import harness

SHARED = os.path.join("..", "shared", "data", "kernel_tuner_caches")


class Replay(harness.KtuneTestCase):
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
        self.assertEqual(result["strategy"], "forest")  # the default
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


if __name__ == "__main__":
    harness.main()
