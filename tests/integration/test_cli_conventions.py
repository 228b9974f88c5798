"""The command line a daily user expects: sweeps of shapes checked up front, noisy measurements
flagged or refused, stricter measurement re-measures, one JSON document shape, help and
suggestions, options accepted where they apply and refused where they do not."""
import json
import os
import pty
import re
import select
import subprocess
import time

import harness

CPU = ["--backend", "cpu", "--no-export"]
FAST = [*CPU, "--max-seconds-per-config", "0.02", "--min-samples", "3"]
SMALL = "rows=16,cols=64"


class Sweeps(harness.KtuneTestCase):
    def test_repeated_shapes_tune_each_kernel_at_each(self):
        document = self.ktune_json("tune", "-k", "rmsnorm", "-k", "softmax", "--shape", "rows=8,cols=64",
                                   "--shape", "rows=16,cols=32", "--budget", "2", *FAST)
        self.assertEqual(document["command"], "tune")
        problems = [(r["kernel"], r["problem"]["rows"], r["problem"]["cols"]) for r in document["results"]]
        self.assertEqual(problems, [("rmsnorm", 8, 64), ("rmsnorm", 16, 32), ("softmax", 8, 64), ("softmax", 16, 32)])
        self.assertEqual(document["exit_code"], 0)

    def test_a_shape_wrong_for_a_later_kernel_fails_before_anything_runs(self):
        result = self.ktune("tune", "-k", "softmax", "-k", "gemm", "--shape", "rows=256,cols=1024", "--budget", "2",
                            *FAST, check=2)
        self.assertIn("'cols' is not a dimension of gemm", result.stderr)
        self.assertIn("--shape rows=256,cols=1024, kernel gemm", result.stderr)
        # Nothing was tuned: no database, or one without measurements.
        if os.path.exists(self.db):
            self.assertEqual(self.query("SELECT COUNT(*) FROM measurements"), [(0,)])

    def test_shapes_from_a_suite_file(self):
        suite = os.path.join(self.dir, "sweep.json")
        with open(suite, "w") as f:
            json.dump({"suite": "sweep", "precisions": ["fp32"],
                       "shapes": {"rmsnorm": [{"rows": 8, "cols": 64}, {"rows": 24, "cols": 64}],
                                  "softmax": [{"rows": 8, "cols": 32}]}}, f)
        document = self.ktune_json("tune", "--shapes", suite, "--budget", "1", *FAST)
        self.assertEqual([(r["kernel"], r["problem"]["rows"]) for r in document["results"]],
                         [("rmsnorm", 8), ("rmsnorm", 24), ("softmax", 8)])
        only = self.ktune_json("tune", "--shapes", suite, "-k", "softmax", "--budget", "1", *FAST)
        self.assertEqual([r["kernel"] for r in only["results"]], ["softmax"])
        refused = self.ktune("tune", "--shapes", suite, "--shape", SMALL, *FAST, check=2)
        self.assertIn("--shape and --shapes", refused.stderr)


class Noise(harness.KtuneTestCase):
    def test_noisy_results_are_flagged(self):
        # Without racing: a raced config's few samples are not a measurement of its noise.
        result = self.tune_json("-k", "rmsnorm", "--shape", SMALL, "--budget", "3", "--noisy-above", "1e-9",
                                "--no-race", *FAST)
        self.assertEqual(result["noisy"], 3)
        self.assertIn("above 0.0%", result["noisy_example"])
        flagged = [json.loads(e).get("noisy") for (e,) in self.query("SELECT environment FROM measurements")]
        self.assertTrue(all(f and f.startswith("noise ") for f in flagged), flagged)
        text = self.ktune("tune", "-k", "rmsnorm", "--shape", "rows=8,cols=64", "--budget", "2", "--noisy-above",
                          "1e-9", *FAST, check=0).stdout
        self.assertIn("NOISY", text)

    def test_an_explicit_max_noise_refuses_to_rank_configs_that_never_settle(self):
        # No CPU timing settles to 1e-12 within 20 ms: every config is noisy and none is ranked.
        result = self.ktune("tune", "-k", "rmsnorm", "--shape", SMALL, "--budget", "2", "--max-noise", "1e-12",
                            "--json", *FAST, check=1)
        summary = harness.only_result(self, json.loads(result.stdout))
        self.assertEqual(summary["outcomes"], {"noisy": 2})
        self.assertIsNone(summary["best"])
        messages = [m for (m,) in self.query("SELECT message FROM measurements")]
        self.assertTrue(all("samples never settled" in m and "--max-noise" in m for m in messages), messages)
        # The same tune without the bound measures them again and ranks them.
        again = self.tune_json("-k", "rmsnorm", "--shape", SMALL, "--budget", "2", *FAST)
        self.assertEqual(again["outcomes"], {"ok": 2})
        self.assertEqual(again["evaluated"], 2)

    def test_a_loaded_machine_is_warned_about(self):
        result = self.ktune("tune", "-k", "rmsnorm", "--shape", SMALL, "--budget", "1", "--json", *FAST,
                            env_extra={"KTUNE_LOAD_AVERAGE": "1000"}, check=0)
        self.assertIn("ktune: warning: the machine is loaded (load average 1000.00", result.stderr)
        summary = harness.only_result(self, json.loads(result.stdout))
        self.assertEqual(len(summary["warnings"]), 1)
        quiet = self.ktune("tune", "-k", "rmsnorm", "--shape", SMALL, "--budget", "1", "--json", *FAST,
                           env_extra={"KTUNE_LOAD_AVERAGE": "0"}, check=0)
        self.assertNotIn("loaded", quiet.stderr)
        self.assertEqual(harness.only_result(self, json.loads(quiet.stdout))["warnings"], [])


class Remeasuring(harness.KtuneTestCase):
    def samples(self):
        return sorted(n for (n,) in self.query("SELECT sample_count FROM measurements"))

    def test_stricter_measurement_measures_stored_results_again(self):
        # Large enough that 20 ms hold a few dozen samples, not the 10000-sample cap.
        args = ["-k", "rmsnorm", "--shape", "rows=512,cols=2048", "--budget", "2", "--strategy", "brute_force", "--no-race"]
        first = self.tune_json(*args, *FAST)
        self.assertEqual(first["evaluated"], 2)
        env = json.loads(self.query("SELECT environment FROM measurements LIMIT 1")[0][0])
        self.assertEqual(env["measured_with"]["min_samples"], 3)
        reused = self.tune_json(*args, *FAST)
        self.assertEqual((reused["evaluated"], reused["reused"]), (0, 2))
        more = max(self.samples()) + 5  # more samples than either stored result has
        self.assertLess(more, 10000)
        stricter = self.tune_json(*args, *CPU, "--min-samples", str(more), "--max-seconds-per-config", "20")
        self.assertEqual((stricter["evaluated"], stricter["reused"]), (2, 0))
        self.assertTrue(all(n >= more for n in self.samples()), self.samples())
        forced = self.tune_json(*args, *FAST, "--remeasure")
        self.assertEqual((forced["evaluated"], forced["reused"]), (2, 0))
        # Each config has one record, the latest.
        self.assertEqual(self.query("SELECT COUNT(*) FROM measurements"), [(2,)])


class OneDocument(harness.KtuneTestCase):
    def test_tune_json_has_one_shape_for_one_kernel_and_several(self):
        one = self.ktune_json("tune", "-k", "rmsnorm", "--shape", SMALL, "--budget", "1", *FAST)
        two = self.ktune_json("tune", "-k", "rmsnorm", "-k", "softmax", "--shape", SMALL, "--budget", "1", *FAST)
        self.assertEqual(set(one), set(two))
        self.assertEqual(set(one), {"command", "backend", "compile_only", "results", "exit_code"})
        self.assertEqual((len(one["results"]), len(two["results"])), (1, 2))
        # A result names a noisy config only when one was (a busy machine's timing): not a member
        # of the document's shape.
        def members(result):
            return set(result) - {"noisy_example"}
        self.assertEqual(members(one["results"][0]), members(two["results"][1]))

    def test_best_and_header_say_whose_they_are(self):
        text = self.ktune("tune", "-k", "rmsnorm", "--shape", SMALL, "--budget", "1", "--backend", "cpu",
                          "--max-seconds-per-config", "0.02", "--export-dir", os.path.join(self.dir, "t"), check=0).stdout
        self.assertIn("(fastest this tune visited, measured now or reused)", text)
        self.assertIn("(the database's fastest for each problem, across tunes)", text)


class Conventions(harness.KtuneTestCase):
    def test_help_command(self):
        overall = self.ktune("help", check=0)
        self.assertIn("tune", overall.stdout)
        self.assertEqual(self.ktune("help", "tune", check=0).stdout, self.ktune("tune", "--help", check=0).stdout)
        wrong = self.ktune("help", "tnue", check=2)
        self.assertIn("did you mean 'tune'", wrong.stderr)

    def test_suggestions_for_commands_and_options(self):
        self.assertIn("unknown command 'tnue' (did you mean 'tune'?)", self.ktune("tnue", check=2).stderr)
        self.assertIn("unknown option --budjet of ktune tune (did you mean --budget?)",
                      self.ktune("tune", "--budjet", "4", check=2).stderr)
        self.assertIn("did you mean --budget?", self.ktune("tune", "--budjet=4", check=2).stderr)
        far = self.ktune("tune", "--frobnicate", check=2).stderr
        self.assertIn("unknown option --frobnicate", far)
        self.assertNotIn("did you mean", far)

    def test_short_version_flag(self):
        self.assertEqual(self.ktune("-V", check=0).stdout, self.ktune("--version", check=0).stdout)
        self.assertRegex(self.ktune("-V", check=0).stdout, r"^ktune \d+\.\d+\.\d+ \(")

    def test_json_and_db_before_the_command(self):
        self.assertIn("kernels", self.ktune_json("list"))
        listed = json.loads(self.ktune("--json", "list", check=0).stdout)
        self.assertIn("kernels", listed)
        db = os.path.join(self.dir, "other.db")
        self.ktune("--db", db, "tune", "-k", "rmsnorm", "--shape", SMALL, "--budget", "1", *FAST, check=0)
        self.assertTrue(os.path.exists(db))

    def test_commands_without_a_database_refuse_db(self):
        for command in ("list", "devices"):
            result = self.ktune(command, "--db", "x.db", check=2)
            self.assertIn(f"ktune {command} reads no results database, so it takes no --db", result.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.dir, "x.db")))

    def test_help_texts_do_not_run_together(self):
        text = self.ktune("tune", "--help", check=0).stdout
        self.assertNotIn("Excludes", text)
        self.assertNotRegex(text, r"UINT:UINT in \[")
        both = self.ktune("tune", "--prior", __file__, "--no-prior", check=2)
        self.assertIn("--no-prior contradict", both.stderr)


class Consistency(harness.KtuneTestCase):
    def cuda_built(self):
        backends = {b["backend"]: b for b in self.ktune_json("devices")["backends"]}
        if not backends["cuda"]["built"]:
            self.skipTest("this build has no CUDA backend")
        return backends["cuda"]

    def test_an_architecture_nvrtc_cannot_target_is_one_error(self):
        self.cuda_built()
        result = self.ktune("tune", "-k", "softmax", "-b", "cuda", "--compile-only", "--arch", "sm_91",
                            env_extra={"KTUNE_CACHE_DIR": os.path.join(self.dir, "c")}, check=2)
        self.assertEqual(result.stderr.count("ktune: error:"), 1, result.stderr)
        self.assertIn("cannot compile for sm_91; it supports", result.stderr)
        self.assertEqual(result.stdout, "")

    def test_compile_only_refuses_measuring_limits(self):
        for option in (["--budget", "3"], ["--time-limit", "5"]):
            result = self.ktune("tune", "-k", "softmax", "-b", "cuda", "--compile-only", "--arch", "sm_90a", *option,
                                check=2)
            self.assertIn(f"{option[0]} limits what a tune measures", result.stderr)

    def test_gpu_defaults_for_gemm_and_attention(self):
        self.cuda_built()
        env = {"KTUNE_CACHE_DIR": os.path.join(self.dir, "c")}
        gemm = self.tune_json("-k", "gemm", "-b", "cuda", "--compile-only", "--arch", "sm_90a", "--covering-sample",
                              "--fast-compile", env_extra=env, timeout=1200)
        self.assertEqual(gemm["problem"]["precision"], "bf16")
        self.assertEqual((gemm["problem"]["m"], gemm["problem"]["n"], gemm["problem"]["k"]), (4096, 4096, 4096))
        cpu = self.tune_json("-k", "gemm", "--shape", "m=8,n=8,k=8", "--budget", "1", *FAST)
        self.assertEqual(cpu["problem"]["precision"], "fp32")
        named = self.tune_json("-k", "gemm", "-b", "cuda", "--compile-only", "--arch", "sm_90a", "--covering-sample",
                               "--fast-compile", "--precision", "fp16", "--shape", "m=64,n=64,k=64", env_extra=env,
                               timeout=1200)
        self.assertEqual((named["problem"]["precision"], named["problem"]["m"]), ("fp16", 64))

    def test_no_device_hints_fit_the_command(self):
        backends = {b["backend"]: b for b in self.ktune_json("devices")["backends"]}
        if not backends["cuda"]["built"] or backends["cuda"].get("devices"):
            self.skipTest("needs a CUDA build on a machine without a CUDA device")
        spec = os.path.join(harness.ARGS.source_dir, "examples", "t1-kernels", "vec_fma", "vec_fma_T1.json")
        t1 = self.ktune("tune", "--t1", spec, "--budget", "1", check=3).stderr
        self.assertIn("A T1 spec's kernel runs on a GPU", t1)
        self.assertNotIn("--backend cpu", t1)
        space = self.ktune("space", "-k", "rmsnorm", "-b", "cuda", check=3).stderr
        self.assertIn("Pass --arch", space)
        self.assertNotIn("--compile-only", space)
        tune = self.ktune("tune", "-k", "rmsnorm", "-b", "cuda", "--budget", "1", "--no-export", check=3).stderr
        self.assertIn("Pass --backend cpu to tune here", tune)

    def test_a_default_config_invalid_here_and_an_unrelated_prior_are_said(self):
        result = self.tune_json("-k", "gemm", "--shape", "m=8,n=8,k=8", "--budget", "2", *FAST)
        self.assertIsNone(result["default"])
        self.assertTrue(any("is not valid at this problem" in w for w in result["warnings"]), result["warnings"])
        record = os.path.join(self.dir, "rec")
        self.tune_json("-k", "softmax", "--shape", SMALL, "--budget", "3", "--record", record, *FAST)
        prior = next(os.path.join(record, f) for f in os.listdir(record) if "_T4" not in f)
        unrelated = self.tune_json("-k", "gemm", "--shape", "m=8,n=8,k=8", "--budget", "1", "--prior", prior, *FAST,
                                   "--db", os.path.join(self.dir, "p.db"))
        self.assertTrue(any(w.startswith("--prior: none of the") for w in unrelated["warnings"]), unrelated["warnings"])


class ProgressEta(harness.KtuneTestCase):
    def test_eta_never_passes_the_time_limit(self):
        """On a terminal the progress line's ETA is bounded by --time-limit (a 3000-config space
        at a few configs a second would say minutes)."""
        master, slave = pty.openpty()
        process = subprocess.Popen([harness.ARGS.ktune, "tune", "-k", "gemm", "--shape", "m=64,n=64,k=64", "--time-limit",
                                    "4", "--strategy", "random", *FAST], cwd=self.dir, stdout=subprocess.DEVNULL,
                                   stderr=slave)
        os.close(slave)
        seen = b""
        deadline = time.time() + 120
        while time.time() < deadline:
            ready, _, _ = select.select([master], [], [], 1)
            if ready:
                try:
                    chunk = os.read(master, 4096)
                except OSError:
                    break
                if not chunk:
                    break
                seen += chunk
            elif process.poll() is not None:
                break
        process.wait(timeout=60)
        os.close(master)
        etas = [int(x) for x in re.findall(rb"ETA (\d+) s", seen)]
        self.assertTrue(etas, seen[-2000:])
        self.assertLessEqual(max(etas), 4)


if __name__ == "__main__":
    harness.main()
