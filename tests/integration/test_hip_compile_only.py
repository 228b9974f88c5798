"""The HIP backend without an AMD GPU: a covering sample of the valid variants of every HIP family
(every value, and every pair of values of two parameters, that valid variants have; --covering-
sample) compiles with hiprtc for two AMD targets (gfx90a: CDNA, wavefronts of 64; gfx1030: RDNA,
wavefronts of 32),
a tune that needs a device exits 3 and says that no HIP device was found, and bad input is
refused. Skipped when this build has no HIP backend."""
import json
import os


import harness

# The CUDA compile check's shapes (odd sizes, so every bounds check is compiled in).
SHAPES = {"rmsnorm_rope": "rows=7,heads=3,head_dim=130", "copy": "n=1001", "gemm": "m=3001,n=2999,k=264",
          "instance_norm": "batch=2,channels=3,height=37,width=29",
          "layernorm_linear": "m=3001,n=2999,k=264", "ffn": "m=300,k=264,f=520,activation=1",
          "flash_attention": "batch=2,heads=4,kv_heads=2,seq_q=77,seq_kv=1000,head_dim=64,causal=0",
          "paged_attention": "batch=3,heads=16,kv_heads=2,head_dim=128,page_size=16,seq_kv=2049",
          "grouped_gemm": "m=3001,experts=7,n=1001,k=264",
          "moe_routing": "tokens=3001,experts=256,top_k=8,hidden=1000,capacity_percent=125,renormalize=1",
          "moe_combine": "tokens=301,top_k=8,hidden=1000",
          "split_heads": "batch=2,seq=37,heads=6,kv_heads=2,head_dim=130,rope=1",
          "merge_heads": "batch=2,heads=6,seq=37,head_dim=130",
          "flash_attention_backward": "batch=1,heads=2,seq_q=129,seq_kv=129,head_dim=128,causal=1",
          "block_sparse_attention":
              "batch=2,heads=4,kv_heads=2,seq_q=77,seq_kv=1000,head_dim=64,block=128,density_percent=40,pattern=0"}
# At least these run on AMD GPUs through the one source (the list), besides the others.
REQUIRED = {"rmsnorm", "softmax", "swiglu", "gemm", "flash_attention"}


class HipCompileOnly(harness.KtuneTestCase):
    def setUp(self):
        super().setUp()
        backends = {b["backend"]: b for b in self.ktune_json("devices")["backends"]}
        if not backends["hip"]["built"]:
            self.skipTest("this build has no HIP backend")

    def hip_kernels(self):
        return [k["kernel"] for k in self.ktune_json("list")["kernels"]
                if any(b["backend"] == "hip" for b in k["backends"])]

    def test_every_variant_compiles_for_two_amd_targets(self):
        kernels = self.hip_kernels()
        self.assertLessEqual(REQUIRED, set(kernels))
        cache = os.path.join(self.dir, "code-objects")  # empty: every variant is really compiled
        # hiprtc compiles one variant at a time (about 0.45 s each): every valid variant of every
        # family for both targets would take CI 20 minutes; the covering sample takes a few.
        sampled = valid = 0
        for arch in ["gfx90a", "gfx1030"]:
            for kernel in kernels:
                shape = SHAPES.get(kernel, "rows=7,cols=1001")
                with self.subTest(kernel=kernel, arch=arch):
                    # --fast-compile: hiprtc at -O0 (front end, code generation and link all run).
                    result = self.tune_json("--kernel", kernel, "--backend", "hip", "--compile-only",
                                             "--fast-compile", "--covering-sample", "--arch", arch, "--shape", shape,
                                             "--precision", "bf16", env_extra={"KTUNE_CACHE_DIR": cache}, timeout=1500)
                    self.assertEqual(result["backend"], "hip")
                    self.assertEqual(result["arch"], arch)
                    self.assertEqual(result["sample"], "covering")
                    self.assertGreater(result["space"]["valid"], 0)
                    self.assertEqual(result["failed"], 0, json.dumps(result["failures"][:3], indent=1))
                    self.assertEqual(result["compiled"], result["selected"])
                    self.assertGreater(result["selected"], 0)
                    sampled += result["selected"]
                    valid += result["space"]["valid"]
        self.assertLess(sampled, valid / 4)  # a sample, not the sweep
        # Real code objects: AMD GPU ELF files, one per distinct variant and target.
        objects = [os.path.join(cache, name) for name in os.listdir(cache) if name.endswith(".hsaco")]
        self.assertGreater(len(objects), 100)
        with open(objects[0], "rb") as code:
            self.assertEqual(code.read(4), b"\x7fELF")

    def test_the_portable_source_is_the_cuda_source(self):
        # One source for both vendors: every HIP family is a CUDA family.
        cuda = [k["kernel"] for k in self.ktune_json("list")["kernels"]
                if any(b["backend"] == "cuda" for b in k["backends"])]
        if not cuda:
            self.skipTest("this build has no CUDA backend")
        self.assertLessEqual(set(self.hip_kernels()), set(cuda))

    def test_tune_without_an_amd_gpu_exits_3(self):
        result = self.ktune("tune", "--kernel", "rmsnorm", "--backend", "hip", "--shape", "rows=4,cols=64",
                            "--budget", "1", "--no-export", check=3)
        self.assertIn("no HIP device was found", result.stderr)
        self.assertIn("--compile-only", result.stderr)
        devices = {b["backend"]: b for b in self.ktune_json("devices")["backends"]}
        self.assertEqual(devices["hip"]["devices"], [])

    def test_bad_input_is_refused(self):
        tune = ["tune", "--kernel", "rmsnorm", "--backend", "hip", "--compile-only", "--shape", "rows=7,cols=64"]
        result = self.ktune(*tune, "--arch", "sm_90a", check=2)
        self.assertIn("'sm_90a' is not an AMD GPU target", result.stderr)
        result = self.ktune("tune", "--kernel", "gemm", "--backend", "hip", "--compile-only", "--arch", "gfx90a",
                            "--precision", "fp8_e4m3", "--json", check=2)
        self.assertIn("HIP kernels take fp32, fp16, bf16, not fp8_e4m3", result.stderr)
        # A family with CUDA-only code (the fault-injection kernels) has no HIP implementation.
        result = self.ktune("tune", "--kernel", "fault_injection", "--backend", "hip", "--compile-only", "--arch",
                            "gfx90a", env_extra={"KTUNE_ENABLE_TEST_FAMILIES": "1"}, check=2)
        self.assertIn("no hip implementation", result.stderr.lower())


if __name__ == "__main__":
    harness.main()
