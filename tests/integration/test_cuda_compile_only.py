"""A covering sample of the valid variants of every CUDA family (every value, and every pair of
values of two parameters, that valid variants have: --covering-sample) compiles with NVRTC for
sm_90a, with no GPU present (skipped when this build has no CUDA backend). The full sweep, every
valid variant fully optimized and run, is ci/gpu-check's on the GPU machine."""
import json
import os

import harness

# Shapes per family (rows=7,cols=1001 for the others). gemm: large enough for persistent variants
# (more tiles than SMs), k a multiple of 8 for wgmma; ffn and layernorm_linear likewise. flash_attention: both head sizes (each is a
# compile-time constant), causal and not, odd lengths and grouped-query heads.
SHAPES = {"rmsnorm_rope": ["rows=7,heads=3,head_dim=130"], "copy": ["n=1001"], "gemm": ["m=3001,n=2999,k=264"],
          "instance_norm": ["batch=2,channels=3,height=37,width=29"],
          "layernorm_linear": ["m=3001,n=2999,k=264"], "ffn": ["m=3001,k=264,f=520,activation=1"],
          "flash_attention": ["batch=2,heads=4,kv_heads=2,seq_q=77,seq_kv=1000,head_dim=64,causal=0",
                              "batch=1,heads=2,seq_q=1000,seq_kv=77,head_dim=128,causal=1"],
          # paged_attention: a group of 8 (every heads_per_block but 16), enough tokens for 32 splits.
          "paged_attention": ["batch=3,heads=16,kv_heads=2,head_dim=128,page_size=16,seq_kv=2049"],
          "grouped_gemm": ["m=3001,experts=7,n=1001,k=264"],
          # moe_routing: 256 experts (eight logits per lane) and top-8; hidden takes every vector.
          "moe_routing": ["tokens=3001,experts=256,top_k=8,hidden=1000,capacity_percent=125,renormalize=1"],
          "moe_combine": ["tokens=301,top_k=8,hidden=1000"],
          "split_heads": ["batch=2,seq=37,heads=6,kv_heads=2,head_dim=130,rope=1"],
          "merge_heads": ["batch=2,heads=6,seq=37,head_dim=130"],
          "flash_attention_backward": ["batch=2,heads=4,kv_heads=2,seq_q=77,seq_kv=100,head_dim=64",
                                       "batch=1,heads=2,seq_q=129,seq_kv=129,head_dim=128,causal=1"],
          # block_sparse_attention: both head sizes, causal and not, a mask block of 128 (every tile).
          "block_sparse_attention": [
              "batch=2,heads=4,kv_heads=2,seq_q=77,seq_kv=1000,head_dim=64,block=128,density_percent=40,pattern=0",
              "batch=1,heads=2,seq_q=1000,seq_kv=77,head_dim=128,causal=1,block=128,density_percent=30,pattern=1"]}


class CudaCompileOnly(harness.KtuneTestCase):
    def test_every_variant_compiles(self):
        devices = {b["backend"]: b for b in self.ktune_json("devices")["backends"]}
        if not devices["cuda"]["built"]:
            self.skipTest("this build has no CUDA backend")
        kernels = [k["kernel"] for k in self.ktune_json("list")["kernels"]
                   if any(b["backend"] == "cuda" for b in k["backends"])]
        self.assertIn("rmsnorm", kernels)
        cache = os.path.join(self.dir, "cubins")  # empty: every variant is really compiled
        for kernel in kernels:
            # One precision, small odd shapes, a covering sample and NVRTC's fast-compile mode
            # (every compiler stage, less optimization: 2-4x faster) keep this within CI's time
            # on two cores.
            for shape in SHAPES.get(kernel, ["rows=7,cols=1001"]):
                precision = "bf16"
                with self.subTest(kernel=kernel, precision=precision, shape=shape):
                    result = self.tune_json("--kernel", kernel, "--backend", "cuda", "--compile-only",
                                             "--fast-compile", "--covering-sample", "--arch", "sm_90a", "--shape", shape,
                                             "--precision", precision, env_extra={"KTUNE_CACHE_DIR": cache},
                                             timeout=1500)
                    self.assertTrue(result["fast_compile"])
                    self.assertGreater(result["space"]["valid"], 0)
                    self.assertEqual(result["failed"], 0, json.dumps(result["failures"][:3], indent=1))
                    self.assertEqual(result["sample"], "covering")
                    self.assertEqual(result["compiled"], result["selected"])
                    self.assertGreater(result["selected"], 0)

    def test_compile_only_reports_a_broken_variant(self):
        devices = {b["backend"]: b for b in self.ktune_json("devices")["backends"]}
        if not devices["cuda"]["built"]:
            self.skipTest("this build has no CUDA backend")
        result = self.ktune("tune", "--kernel", "fault_injection", "--backend", "cuda", "--compile-only",
                            "--arch", "sm_90a", "--json", env_extra={"KTUNE_ENABLE_TEST_FAMILIES": "1",
                                                                    "KTUNE_CACHE_DIR": os.path.join(self.dir, "c")},
                            check=1)
        summary = harness.only_result(self, json.loads(result.stdout))
        self.assertEqual(summary["failed"], 1)
        self.assertEqual(summary["failures"][0]["config"]["behaviour"], "compile_error")
        self.assertIn("meant not to compile", summary["failures"][0]["log"])

    def test_bad_arch_is_bad_input(self):
        devices = {b["backend"]: b for b in self.ktune_json("devices")["backends"]}
        if not devices["cuda"]["built"]:
            self.skipTest("this build has no CUDA backend")
        self.ktune("tune", "--kernel", "rmsnorm", "--backend", "cuda", "--compile-only", "--arch", "gfx90a", check=2)
        self.ktune("tune", "--kernel", "rmsnorm", "--backend", "cuda", "--compile-only", check=2)
        # --fast-compile only checks variants; a tune measures fully optimized ones.
        result = self.ktune("tune", "--kernel", "rmsnorm", "--backend", "cuda", "--fast-compile", check=2)
        self.assertIn("--fast-compile applies only with --compile-only", result.stderr)

    def test_without_nvrtc_says_what_is_missing(self):
        # NVRTC is opened at run time: without it, a compile is a missing backend (exit 3) that
        # names the library and what was tried, not a binary that fails to load.
        devices = {b["backend"]: b for b in self.ktune_json("devices")["backends"]}
        if not devices["cuda"]["built"]:
            self.skipTest("this build has no CUDA backend")
        missing = os.path.join(self.dir, "no-such-dir", "libnvrtc.so.13")
        result = self.ktune("tune", "--kernel", "rmsnorm", "--backend", "cuda", "--compile-only", "--arch", "sm_90a",
                            "--shape", "rows=7,cols=1001", env_extra={"KTUNE_NVRTC_LIBRARY": missing,
                                                                      "KTUNE_CACHE_DIR": os.path.join(self.dir, "n")},
                            check=3)
        self.assertIn("NVRTC, CUDA's run-time compiler, cannot be loaded", result.stderr)
        self.assertIn(missing, result.stderr)
        self.assertIn("KTUNE_NVRTC_LIBRARY", result.stderr)
        # `ktune devices` says which NVRTC compiles the variants, or why there is none.
        cuda = devices["cuda"]["compiler"]
        self.assertEqual(cuda["name"], "NVRTC")
        self.assertRegex(cuda["version"], r"^\d+\.\d+$")
        self.assertIn("libnvrtc.so", cuda["library"])
        without = {b["backend"]: b for b in self.ktune_json("devices", env_extra={"KTUNE_NVRTC_LIBRARY": missing})[
            "backends"]}
        self.assertIn(missing, without["cuda"]["compiler"]["missing"])
        text = self.ktune("devices", env_extra={"KTUNE_NVRTC_LIBRARY": missing}).stdout
        self.assertIn("compiler: NVRTC missing: NVRTC, CUDA's run-time compiler, cannot be loaded", text)


if __name__ == "__main__":
    harness.main()
