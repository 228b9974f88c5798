"""The Vulkan backend for real on lavapipe (Mesa's CPU Vulkan driver, no GPU needed): every
family with a Vulkan shader is tuned at odd shapes, every valid config of each space verified
against the float64 reference in fp32, sampled configs in fp16 and bf16; every variant of every
family compiles for NVIDIA's limits (the cooperative-matrix GEMM through glslang at tune time);
missing drivers and bad input are refused with clear errors. Skipped when this build has no
Vulkan backend or no Vulkan device is present."""
import json
import os
import re
import sqlite3

import harness

# The families with Vulkan shaders: every memory-bound one but the serving ones, GEMM, flash attention,
# layernorm_linear, and the attention block's split_heads and merge_heads.
REQUIRED = {"rmsnorm", "layernorm", "residual_layernorm", "rmsnorm_rope", "softmax", "softmax_dropout", "instance_norm",
            "swiglu", "geglu", "copy", "gemm", "flash_attention", "layernorm_linear", "split_heads", "merge_heads"}
# Odd sizes: no dim is a multiple of any tile or vector width.
SHAPES = {"rmsnorm_rope": "rows=5,heads=3,head_dim=66", "copy": "n=10007", "gemm": "m=67,n=45,k=83",
          "instance_norm": "batch=2,channels=3,height=17,width=19", "layernorm_linear": "m=67,n=45,k=83",
          "flash_attention": "batch=1,heads=4,kv_heads=2,seq_q=37,seq_kv=53,head_dim=64",
          "split_heads": "batch=2,seq=37,heads=6,kv_heads=2,head_dim=130,rope=1",
          "merge_heads": "batch=2,heads=6,seq=37,head_dim=130"}
# Little time per config: lavapipe runs on the CI machine's two cores; speed is not asserted here.
# (No --max-noise: given, it is also a bound, and lavapipe's timings on a busy machine never settle.)
FAST = ["--min-samples", "3", "--max-seconds-per-config", "0.02"]


class VulkanOnLavapipe(harness.KtuneTestCase):
    def setUp(self):
        super().setUp()
        backends = {b["backend"]: b for b in self.ktune_json("devices")["backends"]}
        if not backends["vulkan"]["built"]:
            self.skipTest("this build has no Vulkan backend")
        if not backends["vulkan"]["devices"]:
            self.skipTest("no Vulkan device (install mesa-vulkan-drivers for lavapipe)")
        self.device = backends["vulkan"]["devices"][0]

    def vulkan_kernels(self):
        return [k["kernel"] for k in self.ktune_json("list")["kernels"]
                if any(b["backend"] == "vulkan" for b in k["backends"])]

    def outcomes(self, kernel, precision):
        with sqlite3.connect(self.db) as db:
            return db.execute(
                "SELECT m.outcome, m.message FROM measurements m JOIN kernels k ON k.id = m.kernel_id "
                "JOIN problems p ON p.id = m.problem_id WHERE k.family = ? AND k.backend = 'vulkan' "
                "AND p.precision = ?", (kernel, precision)).fetchall()

    def test_the_device_is_described(self):
        limits = self.device["limits"]
        for name in ["max_threads_per_block", "max_shared_memory_per_block", "subgroup_size", "max_grid_x",
                     "has_cooperative_matrix"]:
            self.assertIn(name, limits)
        self.assertGreater(limits["max_shared_memory_per_block"], 0)
        properties = self.device["properties"]
        self.assertIn("api_version", properties)
        self.assertGreater(properties["timestamp_period_ns"], 0)
        self.assertTrue(self.device["fingerprint"].startswith("vulkan|"))

    def test_every_family_tunes_with_correct_results(self):
        kernels = self.vulkan_kernels()
        self.assertLessEqual(REQUIRED, set(kernels))
        for kernel in kernels:
            shape = SHAPES.get(kernel, "rows=7,cols=333")
            for precision in ["fp32", "fp16", "bf16"]:
                with self.subTest(kernel=kernel, precision=precision):
                    # fp32: the whole space (every specialization verified); 16-bit: a sample.
                    budget = (["--strategy", "brute_force", "--time-limit", "900"] if precision == "fp32"
                              else ["--budget", "6"])
                    result = self.tune_json("--kernel", kernel, "--backend", "vulkan", "--shape", shape,
                                             "--precision", precision, "--db", self.db, "--no-export", *budget,
                                             *FAST, timeout=1500)
                    self.assertEqual(result["backend"], "vulkan")
                    self.assertGreater(result["evaluated"], 0)
                    if precision == "fp32":
                        self.assertEqual(result["evaluated"], result["space"]["valid"])
                    bad = [row for row in self.outcomes(kernel, precision) if row[0] != "ok"]
                    self.assertEqual(bad, [], f"{kernel} {precision}: configs not ok")
                    self.assertEqual(result["outcomes"], {"ok": result["evaluated"]})
                    self.assertGreater(result["best"]["median_ns"], 0)

    def test_sixteen_byte_accesses_of_16_bit_elements(self):
        # vector 8 in fp16 and bf16 moves eight elements as one uvec4 and converts them in pairs:
        # a space pinned to it, at widths that are multiples of 8 but of no larger power of two.
        for kernel in ["softmax", "softmax_dropout", "swiglu", "geglu"]:
            with open(os.path.join(harness.ARGS.source_dir, "search_spaces", f"{kernel}.vulkan.json")) as f:
                space = json.load(f)
            next(p for p in space["parameters"] if p["name"] == "vector")["values"] = [8]
            space["default"]["vector"] = 8
            pinned = os.path.join(self.dir, f"{kernel}.vector8.json")
            with open(pinned, "w") as f:
                json.dump(space, f)
            for precision in ["fp16", "bf16"]:
                with self.subTest(kernel=kernel, precision=precision):
                    result = self.tune_json("--kernel", kernel, "--backend", "vulkan", "--space", pinned,
                                             "--shape", "rows=7,cols=328", "--precision", precision, "--db",
                                             self.db, "--no-export", "--budget", "6", "--strategy", "random", *FAST,
                                             timeout=600)
                    self.assertEqual(result["best"]["config"]["vector"], 8)
                    self.assertEqual(result["outcomes"], {"ok": result["evaluated"]})
                    self.assertEqual(result["evaluated"], min(6, result["space"]["valid"]))

    def test_every_variant_compiles_for_nvidia(self):
        cache = os.path.join(self.dir, "spirv")  # empty: every module is really built
        for kernel in self.vulkan_kernels():
            with self.subTest(kernel=kernel):
                result = self.tune_json("--kernel", kernel, "--backend", "vulkan", "--compile-only",
                                         "--arch", "nvidia", "--precision", "fp16",
                                         "--shape", SHAPES.get(kernel, "rows=7,cols=333"),
                                         env_extra={"KTUNE_CACHE_DIR": cache})
                self.assertGreater(result["space"]["valid"], 0)
                self.assertEqual(result["failed"], 0, json.dumps(result["failures"][:3], indent=1))
                self.assertEqual(result["compiled"], result["space"]["valid"])
        modules = [name for name in os.listdir(os.path.join(cache, "vulkan")) if name.endswith(".spv")]
        self.assertGreaterEqual(len(modules), len(REQUIRED))
        with open(os.path.join(cache, "vulkan", modules[0]), "rb") as module:
            self.assertEqual(module.read(4), b"\x03\x02\x23\x07")  # the SPIR-V magic number

    def test_the_cooperative_matrix_paths_are_compiled_at_tune_time(self):
        # GEMM's and flash attention's path is a compile-time parameter: glslang builds those
        # variants, and the spaces offer them only where the device has cooperative matrices (not
        # lavapipe, which then runs the tiled and simt paths).
        cache = os.path.join(self.dir, "spirv")
        for kernel, shape in (("gemm", "m=256,n=256,k=256"),
                              ("flash_attention", "batch=1,heads=2,seq_q=129,seq_kv=129,head_dim=128,causal=1")):
            with self.subTest(kernel=kernel):
                space = self.ktune_json("space", "--kernel", kernel, "--backend", "vulkan", "--shape", shape,
                                        "--precision", "fp16")
                self.assertGreater(space["valid"], 0)
                result = self.tune_json("--kernel", kernel, "--backend", "vulkan", "--compile-only", "--arch",
                                         "nvidia", "--precision", "fp16", "--shape", shape,
                                         env_extra={"KTUNE_CACHE_DIR": cache})
                self.assertEqual(result["failed"], 0, json.dumps(result["failures"][:3], indent=1))
                lavapipe = self.tune_json("--kernel", kernel, "--backend", "vulkan", "--compile-only", "--arch",
                                           "lavapipe", "--precision", "fp16", "--shape", shape,
                                           env_extra={"KTUNE_CACHE_DIR": cache})
                self.assertLess(lavapipe["space"]["valid"], result["space"]["valid"])
                modules = os.listdir(os.path.join(cache, "vulkan"))
                self.assertGreaterEqual(len([m for m in modules if m.startswith(kernel + "-")]), 2)  # both paths
        # On lavapipe itself a tune takes the simt path and records it with its results.
        tuned = self.tune_json("--kernel", "flash_attention", "--backend", "vulkan", "--precision", "fp16",
                               "--shape", "batch=1,heads=2,seq_q=33,seq_kv=33,head_dim=64", "--budget", "2")
        self.assertEqual(tuned["best"]["config"]["path"], "simt")
        self.assertEqual(tuned["outcomes"], {"ok": tuned["evaluated"]})

    def test_pipeline_statistics_follow_the_driver(self):
        # Where the driver offers VK_KHR_pipeline_executable_properties (NVIDIA's does: registers,
        # shared and local memory; lavapipe's does not) each result carries its statistics.
        offered = self.device["properties"]["pipeline_statistics"]
        self.assertIsInstance(offered, bool)
        self.tune_json("--kernel", "rmsnorm", "--backend", "vulkan", "--shape", "rows=5,cols=77", "--budget",
                        "2", "--db", self.db, "--no-export", *FAST)
        with sqlite3.connect(self.db) as db:
            environments = [json.loads(row[0]) for row in db.execute("SELECT environment FROM measurements")]
        self.assertEqual(len(environments), 2)
        for environment in environments:
            if offered:
                self.assertTrue(environment["pipeline"])
                self.assertTrue(all(isinstance(v, (int, float, bool)) for v in environment["pipeline"].values()))
            else:
                self.assertNotIn("pipeline", environment)

    def test_batched_samples_follow_the_stopping_rule(self):
        # Samples are timed in batches of one command buffer each: a result keeps exactly the
        # samples the stopping rule took (those queued past its decision are dropped), and a
        # memory-bound family's samples each followed a cache eviction.
        self.tune_json("--kernel", "rmsnorm", "--backend", "vulkan", "--shape", "rows=6,cols=90", "--budget", "3",
                        "--db", self.db, "--no-export", *FAST)
        with sqlite3.connect(self.db) as db:
            rows = db.execute("SELECT outcome, message, sample_count, samples, environment FROM measurements").fetchall()
        self.assertEqual(len(rows), 3)
        for outcome, message, sample_count, samples, environment in rows:
            self.assertEqual(outcome, "ok", message)
            # The first batch is --min-samples long, but the time cap may stop the rule before.
            taken = int(re.search(r"after (\d+) samples", message).group(1))
            self.assertGreaterEqual(taken, 1)
            self.assertEqual(sample_count, taken, message)
            self.assertEqual(len(json.loads(samples)), taken, message)
            self.assertTrue(all(ns > 0 for ns in json.loads(samples)))
            environment = json.loads(environment)
            self.assertIs(environment["l2_flushed"], True)
            self.assertGreater(environment["flush_bytes"], 0)
            # lavapipe runs the shader on the host's cores: outputs are compared before timing.
            self.assertEqual(environment["outputs_checked_on"], "host")

    def test_a_tune_resumes_from_the_database(self):
        tune = ["tune", "--kernel", "rmsnorm", "--backend", "vulkan", "--shape", "rows=9,cols=100", "--budget", "4",
                "--db", self.db, "--no-export", *FAST]
        first = harness.only_result(self, self.ktune_json(*tune))
        self.assertEqual(first["reused"], 0)
        second = harness.only_result(self, self.ktune_json(*tune))
        self.assertEqual(second["reused"], 4)

    def test_errors_are_clear(self):
        result = self.ktune("tune", "--kernel", "rmsnorm", "--backend", "vulkan", "--budget", "1", "--no-export",
                            env_extra={"VK_DRIVER_FILES": os.path.join(self.dir, "none.json"),
                                       "VK_ICD_FILENAMES": os.path.join(self.dir, "none.json")}, check=3)
        self.assertIn("no Vulkan driver", result.stderr)
        result = self.ktune("tune", "--kernel", "gemm", "--backend", "vulkan", "--precision", "fp8_e4m3",
                            "--budget", "1", "--no-export", check=2)
        self.assertIn("vulkan kernels take fp32, fp16 or bf16, not fp8_e4m3", result.stderr)
        result = self.ktune("tune", "--kernel", "rmsnorm", "--backend", "vulkan", "--compile-only", "--arch",
                            "sm_90a", check=2)
        self.assertIn("not a Vulkan device kind", result.stderr)


if __name__ == "__main__":
    harness.main()
