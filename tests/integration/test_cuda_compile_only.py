"""Every valid variant of every CUDA family compiles with NVRTC for sm_90a, with no GPU present
(skipped when this build has no CUDA backend)."""
import json
import os

import harness

# gemm: large enough for persistent variants (more tiles than SMs), k a multiple of 8 for wgmma.
SHAPES = {"rmsnorm_rope": "rows=7,heads=3,head_dim=130", "copy": "n=1001", "gemm": "m=3001,n=2999,k=264"}


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
            # One precision and a small odd-width shape keep this within CI's time on two cores
            # (NVRTC takes about 0.15 s a variant); the GPU check covers all three precisions.
            for precision, shape in (("bf16", SHAPES.get(kernel, "rows=7,cols=1001")),):
                with self.subTest(kernel=kernel, precision=precision):
                    result = self.ktune_json("tune", "--kernel", kernel, "--backend", "cuda", "--compile-only",
                                             "--arch", "sm_90a", "--shape", shape, "--precision", precision,
                                             env_extra={"KTUNE_CACHE_DIR": cache}, timeout=1500)
                    self.assertGreater(result["space"]["valid"], 0)
                    self.assertEqual(result["failed"], 0, json.dumps(result["failures"][:3], indent=1))
                    self.assertEqual(result["compiled"], result["space"]["valid"])

    def test_compile_only_reports_a_broken_variant(self):
        devices = {b["backend"]: b for b in self.ktune_json("devices")["backends"]}
        if not devices["cuda"]["built"]:
            self.skipTest("this build has no CUDA backend")
        result = self.ktune("tune", "--kernel", "fault_injection", "--backend", "cuda", "--compile-only",
                            "--arch", "sm_90a", "--json", env_extra={"KTUNE_ENABLE_TEST_FAMILIES": "1",
                                                                    "KTUNE_CACHE_DIR": os.path.join(self.dir, "c")},
                            check=1)
        summary = json.loads(result.stdout)
        self.assertEqual(summary["failed"], 1)
        self.assertEqual(summary["failures"][0]["config"]["behaviour"], "compile_error")
        self.assertIn("meant not to compile", summary["failures"][0]["log"])

    def test_bad_arch_is_bad_input(self):
        devices = {b["backend"]: b for b in self.ktune_json("devices")["backends"]}
        if not devices["cuda"]["built"]:
            self.skipTest("this build has no CUDA backend")
        self.ktune("tune", "--kernel", "rmsnorm", "--backend", "cuda", "--compile-only", "--arch", "gfx90a", check=2)
        self.ktune("tune", "--kernel", "rmsnorm", "--backend", "cuda", "--compile-only", check=2)


if __name__ == "__main__":
    harness.main()
