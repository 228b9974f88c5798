"""The GPU harnesses of ci/gpu (what ci/gpu-check runs), without a GPU: the family descriptors
are read whole, the transformer dims map as declared, narrowed search spaces keep only the
starting points that lie in them and ktune accepts them, the suite plans from the bytes ktune
reports, and ci/gpu-check refuses an unknown phase."""
import glob
import json
import os
import subprocess
import sys

import harness


def gpu_package():
    """The ci.gpu modules of the source tree under test."""
    if harness.ARGS.source_dir not in sys.path:
        sys.path.insert(0, harness.ARGS.source_dir)
    from ci.gpu import families, ktune, narrow, suite_model
    return families, ktune, narrow, suite_model


class GpuHarness(harness.KtuneTestCase):
    def setUp(self):
        super().setUp()
        self.families, self.ktune_runner, self.narrow, self.suite_model = gpu_package()
        self.root = harness.ARGS.source_dir

    def cuda_built(self):
        devices = {b["backend"]: b for b in self.ktune_json("devices")["backends"]}
        return devices.get("cuda", {}).get("built", False)

    def test_reader_finds_every_family_with_its_shapes(self):
        found = self.families.load(self.root)
        paths = glob.glob(os.path.join(self.root, "kernels", "*", "family.json"))
        self.assertEqual(len(found), len(paths))
        for path in paths:
            with open(path) as f:
                descriptor = json.load(f)
            family = found[descriptor["family"]]
            shapes = descriptor.get("shapes", {})
            self.assertEqual(family.odd_shapes, shapes.get("odd", []), path)
            self.assertEqual(family.bench_shape, shapes.get("bench"), path)
            self.assertEqual(family.launch_shapes, shapes.get("launch", []), path)
            self.assertEqual(family.has_backend("cuda"), bool(descriptor["sources"].get("cuda")), path)
            self.assertTrue(family.odd_shapes, f"{path}: no odd shapes")
        self.assertTrue(found["fault_injection"].test_only)
        self.assertNotIn("fault_injection", [f.name for f in self.families.with_backend("cuda", self.root)])

    def test_transformer_mapping(self):
        rope = self.families.load(self.root)["rmsnorm_rope"]
        for hidden in (4096, 8192, 1000):
            self.assertEqual(rope.transformer_shape(256, hidden), {"rows": 256, "heads": hidden // 128, "head_dim": 128})
        self.assertIsNone(rope.uneven_at(256, 4096))
        self.assertIsNotNone(rope.uneven_at(256, 1000))
        self.assertEqual(self.families.load(self.root)["gemm"].transformer_shape(4, 64), {"m": 4, "n": 64, "k": 64})
        for bad in ("__import__('os')", "hidden ** 2", "hidden / 2", "len(hidden)", "width * 2"):
            with self.assertRaises(ValueError, msg=bad):
                self.families.evaluate(bad, tokens=1, hidden=2)

    def test_narrowed_gemm_space_keeps_only_its_starting_points(self):
        source = os.path.join(self.root, "search_spaces", "gemm.cuda.json")
        with open(source) as f:
            paths = {p["path"] for p in json.load(f).get("starting_points", [])}
        self.assertIn("mma", paths, "the family's starting points no longer mix paths; pick another case")
        spaces = self.narrow.write_gemm_path_spaces(source, self.dir)
        for path, file in spaces.items():
            with open(file) as f:
                space = json.load(f)
            self.assertEqual(next(p for p in space["parameters"] if p["name"] == "path")["values"], [path])
            self.assertEqual(space["default"]["path"], path)
            self.assertTrue(all(p["path"] == path for p in space.get("starting_points", [])), file)
        with open(spaces["wgmma"]) as f:
            self.assertTrue(json.load(f)["starting_points"], "the wgmma starting points were dropped too")
        if not self.cuda_built():
            self.skipTest("this build has no CUDA backend")
        for file in spaces.values():
            summary = self.ktune_json("space", "--space", file, "-k", "gemm", "-b", "cuda", "--arch", "sm_90a",
                                      "--shape", "m=2000,n=1800,k=264", "--precision", "bf16")
            self.assertGreater(summary["valid"], 0, file)

    def test_every_narrowed_space_keeps_only_its_starting_points(self):
        spaces = self.narrow.write_feature_spaces(os.path.join(self.root, "search_spaces"), self.dir)
        self.assertTrue(spaces)
        for _, _, file in spaces:
            with open(file) as f:
                space = json.load(f)
            values = {p["name"]: p["values"] for p in space["parameters"]}
            for point in space.get("starting_points", []) + ([space["default"]] if "default" in space else []):
                self.assertTrue(self.narrow.in_space(point, values), f"{file}: {point}")
        with open(os.path.join(self.root, "search_spaces", "gemm.vulkan.json")) as f:
            coopmat = self.narrow.coopmat_space(json.load(f))
        self.assertTrue(all(p["path"] == "coopmat" for p in coopmat.get("starting_points", [])))
        # Narrowed away from the build-time module's value, a space still loads; the Vulkan
        # attention sweep's spaces (ci/gpu/vulkan_attention.py) with it.
        self.assertNotIn("build_time_value", coopmat["parameters"][0])
        from ci.gpu import vulkan_attention
        vulkan_spaces = [self.narrow.write(coopmat, os.path.join(self.dir, "gemm-coopmat.vulkan.json"))]
        vulkan_spaces += [vulkan_attention.path_space("vulkan", path, self.dir) for path in ("coopmat", "simt")]
        for file in vulkan_spaces:
            kernel = "gemm" if "gemm" in file else "flash_attention"
            shape = "m=256,n=256,k=256" if kernel == "gemm" else "batch=1,heads=2,seq_q=129,seq_kv=129,head_dim=128"
            summary = self.ktune_json("space", "--space", file, "-k", kernel, "-b", "vulkan", "--arch", "nvidia",
                                      "--shape", shape, "--precision", "fp16")
            self.assertGreater(summary["valid"], 0, file)
        with open(os.path.join(self.root, "search_spaces", "gemm.cuda.json")) as f:
            space = json.load(f)
        config = space["starting_points"][0]
        pinned = self.narrow.pinned(space, config)
        self.assertEqual(pinned["starting_points"], [config])
        self.assertEqual(pinned["default"], config)

    def test_suite_elements_come_from_ktune_bytes(self):
        if not self.cuda_built():
            self.skipTest("this build has no CUDA backend")
        size, _ = self.ktune_runner.problem_size(harness.ARGS.ktune, "rmsnorm", "cuda", "rows=4096,cols=4096", "bf16",
                                                 arch="sm_90a")
        # x and out of 4096 x 4096 and the weight, 2 bytes each.
        self.assertEqual(size, 2 * (2 * 4096 * 4096 + 4096))

    def test_list_says_which_families_are_memory_bound(self):
        bound = {k["kernel"]: k["memory_bound"] for k in self.ktune_json("list")["kernels"]}
        self.assertFalse(bound["gemm"])
        self.assertFalse(bound["flash_attention"])
        self.assertTrue(bound["rmsnorm"])
        self.assertTrue(bound["copy"])

    def test_suite_model_gives_each_tune_its_share(self):
        remaining = [("baselines", 0)] + [("tune", 1e6)] * 10
        verdict = self.suite_model.decide([], remaining[1:], budget=540, elapsed=0, cap=6)
        self.assertTrue(verdict.run)
        self.assertEqual(verdict.limit, 6.0)
        late = self.suite_model.decide([], remaining[1:], budget=540, elapsed=536, cap=6)
        self.assertFalse(late.run)

    def gpu_check(self, *args, env_extra=None):
        env = dict(os.environ, KTUNE=harness.ARGS.ktune, OUT=os.path.join(self.dir, "out"),
                   KTUNE_GPU_WORK=os.path.join(self.dir, "work"), **(env_extra or {}))
        return subprocess.run([os.path.join(self.root, "ci", "gpu-check"), *args], capture_output=True, text=True,
                              env=env, timeout=600)

    def test_unknown_phase_exits_2(self):
        result = self.gpu_check("bogus")
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn("usage: ci/gpu-check check|bench|suite|all", result.stderr)
        self.assertEqual(self.gpu_check("gemm", "twenty").returncode, 2)

    def test_plans(self):
        """Every phase prints its plan without a GPU (KTUNE_GPU_PLAN=1)."""
        for phase in ("check", "bench", "suite", "dashboard", "spaces", "t1", "gemm", "attention", "scaling",
                      "vulkan", "kernel_tuner", "busy", "serving", "torch_tune"):
            result = self.gpu_check(phase, env_extra={"KTUNE_GPU_PLAN": "1"})
            self.assertEqual(result.returncode, 0, f"{phase}: {result.stderr}")
            self.assertIn(f"== {phase} plan", result.stdout)
        suite = self.gpu_check("suite", env_extra={"KTUNE_GPU_PLAN": "1"}).stdout
        self.assertIn("rmsnorm_rope rows=4096,heads=32,head_dim=128", suite)
        self.assertNotIn("gemm m=", suite)  # gemm and flash_attention have phases of their own
        self.assertIn("plan: swiglu 32768x8192 left out for time", suite)
        # The comparison with Kernel Tuner lists each example spec with Kernel Tuner's geometry.
        kernel_tuner = self.gpu_check("kernel_tuner", env_extra={"KTUNE_GPU_PLAN": "1"}).stdout
        self.assertIn("gelu_tpl: gelu<float>", kernel_tuner)
        self.assertIn("grid (128, 512, 1) block (32, 8, 1)", kernel_tuner)  # conv2d_cmem's default

        busy = self.gpu_check("busy", env_extra={"KTUNE_GPU_PLAN": "1"}).stdout
        self.assertIn("softmax@rows=16384,cols=4096@bf16", busy)
        self.assertIn("gemm@m=4096,n=4096,k=4096@bf16", busy)
        self.assertIn("flash_attention@batch=4,heads=16,seq_q=4096,seq_kv=4096,head_dim=128@bf16", busy)

    def test_gemm_phase_narrows_its_checks_and_ranks_what_a_tune_measured(self):
        from types import SimpleNamespace
        from ci.gpu import phase_gemm
        self.assertEqual(phase_gemm.parse_narrowing("block_m=128,192 path=wgmma stages=3"),
                         {"block_m": [128, 192], "path": ["wgmma"], "stages": [3]})
        with self.assertRaises(SystemExit):
            phase_gemm.parse_narrowing("block_m")
        only_bf16 = SimpleNamespace(environ={"KTUNE_GEMM_CHECK_PRECISIONS": "bf16 fp8_e4m3"})
        self.assertEqual(phase_gemm.check_precisions(only_bf16, phase_gemm.MMA_PRECISIONS), ["bf16"])
        self.assertEqual(phase_gemm.check_precisions(only_bf16, phase_gemm.WGMMA_PRECISIONS), ["bf16", "fp8_e4m3"])
        self.assertEqual(phase_gemm.check_precisions(SimpleNamespace(environ={}), phase_gemm.MMA_PRECISIONS),
                         phase_gemm.MMA_PRECISIONS)
        plan = self.gpu_check("gemm", env_extra={"KTUNE_GPU_PLAN": "1", "KTUNE_GEMM_CHECK_PRECISIONS": "bf16"}).stdout
        self.assertRegex(plan, r"mma brute force: .* in bf16\n")
        # The ranking of a real tune's database: its verified configs, fastest first.
        self.ktune("tune", "-k", "gemm", "-b", "cpu", "--shape", "m=64,n=48,k=32", "--budget", "4", "--db", self.db,
                   "--no-export", check=0)
        ranking = phase_gemm.rank_configs(self.db, 3)
        self.assertIn("### 64x48x32 fp32: 4 configs verified", ranking)
        medians = [float(line.split("|")[-3]) for line in ranking.splitlines() if line.startswith("| ") and "median" not in line]
        self.assertEqual(len(medians), 3)
        self.assertEqual(medians, sorted(medians))

    def test_serving_judges_each_family_against_its_bar(self):
        from ci.gpu import phase_serving
        # grouped_gemm's group sizes as kernels/grouped_gemm/family.cpp draws them.
        self.assertEqual(phase_serving.group_sizes(1000, 5), [100, 0, 400, 300, 200])
        self.assertEqual(sum(phase_serving.group_sizes(65536, 64)), 65536)
        paged = {"copy_bytes": 2e9, "bytes_per_second": 2.1e12}
        self.assertEqual(phase_serving.verdict("paged_attention", paged, None, {"copy_ns": 1e6})[2], True)  # 2.1 of 2.0 TB/s
        self.assertEqual(phase_serving.verdict("paged_attention", {**paged, "bytes_per_second": 1.3e12}, None,
                                               {"copy_ns": 1e6})[2], False)
        # Against PyTorch's gather of the pages then SDPA (the faster of eager and graph) and SDPA alone.
        _, bar, _ = phase_serving.verdict("paged_attention", {**paged, "ns": 100}, None,
                                          {"copy_ns": 1e6, "gather_sdpa_ns": 400, "gather_sdpa_graph_ns": 300,
                                           "sdpa_ns": 150})
        self.assertIn("gather + SDPA / ktune 3.00x", bar)
        self.assertIn("gathered before 1.50x", bar)
        self.assertEqual(phase_serving.verdict("block_sparse_attention", {"ns": 30}, {"ns": 100}, {})[2], True)
        self.assertEqual(phase_serving.verdict("block_sparse_attention", {"ns": 40}, {"ns": 100}, {})[2], False)
        grouped = {"ns": 100, "flops_per_second": 90}
        self.assertEqual(phase_serving.verdict("grouped_gemm", grouped, {"flops_per_second": 100},
                                               {"loop_ns": 200, "loop_graph_ns": 160})[2], True)
        self.assertEqual(phase_serving.verdict("grouped_gemm", grouped, {"flops_per_second": 100},
                                               {"loop_ns": 200, "loop_graph_ns": 140})[2], False)  # 1.4x the loop
        moe = phase_serving.verdict("moe_routing", {"ns": 10, "copy_bytes": 2e9, "bytes_per_second": 1.5e12}, None,
                                    {"eager_ns": 30, "copy_ns": 1e6})
        self.assertEqual((round(moe[0], 2), moe[2]), (0.75, None))  # 1.5 of a copy's 2 TB/s, no bar
        self.assertIn("3.00x", moe[1])
        plan = self.gpu_check("serving", env_extra={"KTUNE_GPU_PLAN": "1"}).stdout
        self.assertIn("grouped_gemm m=65536,experts=64,n=4096,k=4096", plan)
        self.assertIn("PyTorch gathered:1:32:8:128:16:4096", plan)  # SDPA over gathered KV
        paged = self.gpu_check("serving", env_extra={"KTUNE_GPU_PLAN": "1", "KTUNE_SERVING_FAMILIES": "paged_attention",
                                                     "KTUNE_SERVING_HEAD_DIMS": "64 256",
                                                     "KTUNE_SERVING_PRECISION": "fp16"}).stdout
        self.assertIn("tunes of paged_attention in fp16", paged)
        self.assertIn("head_dim=64,page_size=16,seq_kv=4096", paged)
        self.assertNotIn("head_dim=128", paged)
        bad = self.gpu_check("serving", env_extra={"KTUNE_GPU_PLAN": "1", "KTUNE_SERVING_HEAD_DIMS": "wide"})
        self.assertEqual(bad.returncode, 2, bad.stderr)
        self.assertIn("KTUNE_SERVING_HEAD_DIMS", bad.stderr)

    def test_busy_compares_the_configs_both_binaries_measured(self):
        from ci.gpu import phase_busy
        before = {"a": ("ok", 100.0, {}), "b": ("ok", 200.0, {}), "c": ("wrong_result", None, {}), "d": ("ok", 50.0, {})}
        after = {"a": ("ok", 101.0, {}), "b": ("ok", 198.0, {}), "c": ("ok", 10.0, {}), "e": ("ok", 1.0, {})}
        compared = phase_busy.same_configs(before, after)
        self.assertEqual(compared["common_ok"], 2)  # c failed before, d and e were measured once
        self.assertAlmostEqual(compared["median_ratio"], (1.01 + 0.99) / 2)
        rows = {"x": ("ok", 1.0, {"evaluation_seconds": 0.5, "device_ns": {"kernel": 2e8, "between": 1e8},
                                  "host_ms": {"timing": 300.0}}),
                "y": ("ok", 1.0, {"evaluation_seconds": 0.25, "host_ms": {"timing": 100.0, "load": 5.0}})}
        breakdown = phase_busy.host_breakdown(rows)
        self.assertAlmostEqual(breakdown["evaluation_s"], 0.75)
        self.assertAlmostEqual(breakdown["device_kernel_s"], 0.2)
        self.assertAlmostEqual(breakdown["device_between_s"], 0.1)
        self.assertEqual(breakdown["worker_phases_s"], {"load": 0.005, "timing": 0.4})


if __name__ == "__main__":
    harness.main()
