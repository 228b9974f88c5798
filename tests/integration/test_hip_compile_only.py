"""The HIP backend without an AMD GPU: every valid variant of every HIP family compiles with
hiprtc for two AMD targets (gfx90a: CDNA, wavefronts of 64; gfx1030: RDNA, wavefronts of 32),
a tune that needs a device exits 3 and says that no HIP device was found, and bad input is
refused. Skipped when this build has no HIP backend."""
import json
import os


import harness

# The CUDA compile check's shapes (odd sizes, so every bounds check is compiled in).
SHAPES = {"rmsnorm_rope": "rows=7,heads=3,head_dim=130", "copy": "n=1001", "gemm": "m=3001,n=2999,k=264",
          "flash_attention": "batch=2,heads=4,kv_heads=2,seq_q=77,seq_kv=1000,head_dim=64,causal=0"}
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

    def thinned_space(self, kernel):
        """The family's HIP space with every other value of each parameter (the first and the
        last kept): a fifth of the variants or fewer, each parameter's extremes among them."""
        with open(os.path.join(harness.ARGS.source_dir, "search_spaces", kernel + ".hip.json")) as file:
            space = json.load(file)
        space.pop("default", None)  # its values may be thinned away
        for parameter in space["parameters"]:
            values = parameter["values"]
            parameter["values"] = values[::2] + ([values[-1]] if len(values) % 2 == 0 else [])
        path = os.path.join(self.dir, kernel + ".thinned.hip.json")
        with open(path, "w") as file:
            json.dump(space, file)
        return path

    def test_every_variant_compiles_for_two_amd_targets(self):
        kernels = self.hip_kernels()
        self.assertLessEqual(REQUIRED, set(kernels))
        cache = os.path.join(self.dir, "code-objects")  # empty: every variant is really compiled
        # gfx90a (CDNA, wavefronts of 64): every valid variant of every family. gfx1030 (RDNA,
        # wavefronts of 32): every family over its thinned space (272 variants), since hiprtc
        # compiles one variant at a time (about 0.45 s each) and both in full would take CI 20
        # minutes.
        for arch in ["gfx90a", "gfx1030"]:
            for kernel in kernels:
                shape = SHAPES.get(kernel, "rows=7,cols=1001")
                space = [] if arch == "gfx90a" else ["--space", self.thinned_space(kernel)]
                with self.subTest(kernel=kernel, arch=arch):
                    # --fast-compile: hiprtc at -O0 (front end, code generation and link all run).
                    result = self.ktune_json("tune", "--kernel", kernel, "--backend", "hip", "--compile-only",
                                             "--fast-compile", "--arch", arch, "--shape", shape, "--precision",
                                             "bf16", *space, env_extra={"KTUNE_CACHE_DIR": cache}, timeout=1500)
                    self.assertEqual(result["backend"], "hip")
                    self.assertEqual(result["arch"], arch)
                    self.assertGreater(result["space"]["valid"], 0)
                    self.assertEqual(result["failed"], 0, json.dumps(result["failures"][:3], indent=1))
                    self.assertEqual(result["compiled"], result["space"]["valid"])
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
