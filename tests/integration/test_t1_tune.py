#!/usr/bin/env python3
"""`ktune tune --t1 SPEC`: a kernel of one's own, described by a T1 spec the way Kernel Tuner,
KTT and BAT specs are written (tests/data/t1/scaled_sum: Python-expression Values, conditions,
OpenCL-style GlobalSize over ProblemSize, BinaryRaw inputs, typed scalars, a BinaryRaw
reference).

Without a GPU (CI): every valid variant compiles through NVRTC, the space and launch are read
right, and bad specs are refused with exit 2 naming the member. With a CUDA device (run on the
H200 by ci/gpu-check t1): a real tune verifies every config against the spec's reference, a wrong
reference fails every config as wrong_result, and --record writes the measured space."""
import copy
import json
import os
import shutil

import harness

SPEC_DIR = os.path.join("tests", "data", "t1", "scaled_sum")


class T1Tune(harness.KtuneTestCase):
    def setUp(self):
        super().setUp()
        source = os.path.join(harness.ARGS.source_dir, SPEC_DIR)
        self.spec_dir = os.path.join(self.dir, "scaled_sum")
        shutil.copytree(source, self.spec_dir)
        self.spec = os.path.join(self.spec_dir, "scaled_sum_T1.json")
        self.env = {"KTUNE_CACHE_DIR": os.path.join(self.dir, "cubins")}

    def cuda_built(self):
        return {b["backend"]: b for b in self.ktune_json("devices")["backends"]}["cuda"]

    def variant(self, change):
        """A copy of the spec with `change` applied to its JSON; returns its path."""
        with open(self.spec) as file:
            spec = json.load(file)
        change(spec)
        path = os.path.join(self.spec_dir, "variant_T1.json")
        with open(path, "w") as file:
            json.dump(spec, file)
        return path

    def test_space_reads_python_values_and_conditions(self):
        space = self.ktune_json("space", "--t1", self.spec)
        # 32 block sizes x 4 items x (ldg, restrict) in {00, 01, 11}, minus block*items > 4096.
        expected = sum(1 for b in range(32, 1025, 32) for i in (1, 2, 4, 8) if b * i <= 4096) * 3
        self.assertEqual(space["total"], 32 * 4 * 2 * 2)
        self.assertEqual(space["valid"], expected)

    def test_every_variant_compiles_without_a_gpu(self):
        if not self.cuda_built()["built"]:
            self.skipTest("this build has no CUDA backend")
        result = self.ktune_json("tune", "--t1", self.spec, "--compile-only", "--arch", "sm_90a",
                                 env_extra=self.env, timeout=600)
        self.assertEqual(result["kernel"], "scaled_sum")
        self.assertEqual(result["failed"], 0, json.dumps(result["failures"][:3]))
        self.assertEqual(result["compiled"], result["space"]["valid"])
        self.assertGreater(result["compiled"], 300)

    def test_a_hip_spec_compiles_every_variant_for_an_amd_target(self):
        hip = {b["backend"]: b for b in self.ktune_json("devices")["backends"]}["hip"]
        if not hip["built"]:
            self.skipTest("this build has no HIP backend")

        def as_hip(spec):
            # Language HIP picks the hip backend; fewer block sizes keep hiprtc's serial compiles short.
            spec["KernelSpecification"]["Language"] = "HIP"
            spec["ConfigurationSpace"]["TuningParameters"][0]["Values"] = "[32*i for i in range(1, 5)]"
        spec = self.variant(as_hip)
        result = self.ktune_json("tune", "--t1", spec, "--compile-only", "--fast-compile", "--arch", "gfx90a",
                                 env_extra=self.env, timeout=600)
        self.assertEqual(result["backend"], "hip")
        self.assertEqual(result["kernel"], "scaled_sum")
        self.assertEqual(result["space"]["valid"], 4 * 4 * 3)
        self.assertEqual(result["failed"], 0, json.dumps(result["failures"][:3]))
        self.assertEqual(result["compiled"], result["space"]["valid"])
        # A CUDA arch for the hip backend, and a backend that cannot run a T1 kernel, are bad input.
        self.ktune("tune", "--t1", spec, "--compile-only", "--arch", "sm_90a", env_extra=self.env, check=2)
        refused = self.ktune("tune", "--t1", spec, "--backend", "vulkan", "--compile-only", "--arch", "nvidia",
                             env_extra=self.env, check=2)
        self.assertIn("cuda or hip backend", refused.stderr)
        if not hip.get("devices"):  # a real tune of it needs an AMD GPU, and says so
            missing = self.ktune("tune", "--t1", spec, "--budget", "3", env_extra=self.env, check=3)
            self.assertIn("no HIP device", missing.stderr)

    def test_a_kernel_that_does_not_compile_is_reported(self):
        if not self.cuda_built()["built"]:
            self.skipTest("this build has no CUDA backend")
        with open(os.path.join(self.spec_dir, "scaled_sum.cu"), "a") as source:
            source.write("\n#if items_per_thread == 8\n#error eight items are broken here\n#endif\n")
        result = self.ktune("tune", "--t1", self.spec, "--compile-only", "--arch", "sm_90a", "--json",
                            env_extra=self.env, check=1, timeout=600)
        summary = json.loads(result.stdout)
        self.assertGreater(summary["failed"], 0)
        self.assertTrue(all(f["config"]["items_per_thread"] == 8 for f in summary["failures"]))
        self.assertIn("eight items are broken", summary["failures"][0]["log"])

    def test_bad_specs_exit_2_naming_the_member(self):
        cases = [
            (lambda s: s["KernelSpecification"].update(KernelFile="missing.cu"), "missing.cu"),
            (lambda s: s["KernelSpecification"].update(Language="OpenCL"), "Language"),
            (lambda s: s["KernelSpecification"]["Arguments"][0].update(AccessType="Sometimes"), "AccessType"),
            (lambda s: s["KernelSpecification"]["Arguments"][1].update(MemType="Texture"), "MemType"),
            (lambda s: s["KernelSpecification"]["Arguments"][1].update(FillType="Script"), "FillType"),
            (lambda s: s["KernelSpecification"]["Arguments"][1].update(DataSource="nowhere.bin"), "nowhere.bin"),
            (lambda s: s["KernelSpecification"]["Arguments"][1].update(Size="ProblemSize[3]"), "ProblemSize[3]"),
            (lambda s: s["KernelSpecification"]["Arguments"][4].update(Type="int7"), "int7"),
            (lambda s: s["KernelSpecification"]["ReferenceArguments"][0].update(TargetName="x"), "TargetName"),
            (lambda s: s["ConfigurationSpace"]["TuningParameters"][0].update(Values="range(1, 2, 0)"), "step"),
        ]
        for change, expected in cases:
            with self.subTest(expected=expected):
                result = self.ktune("tune", "--t1", self.variant(change), "--compile-only", "--arch", "sm_90a",
                                    env_extra=self.env, check=2)
                self.assertIn(expected, result.stderr)

    def test_tune_without_a_gpu_exits_3(self):
        cuda = self.cuda_built()
        if not cuda["built"] or cuda.get("devices"):
            self.skipTest("needs a build with CUDA on a machine without a GPU")
        result = self.ktune("tune", "--t1", self.spec, "--budget", "3", env_extra=self.env, check=3)
        self.assertIn("no CUDA device", result.stderr)

    # On a GPU (ci/gpu-check t1 runs these on the H200).
    def require_gpu(self):
        cuda = self.cuda_built()
        if not cuda["built"] or not cuda.get("devices"):
            self.skipTest("no CUDA device")

    def test_gpu_tune_verifies_every_config_against_the_reference(self):
        self.require_gpu()
        record = os.path.join(self.dir, "recorded")
        result = self.ktune_json("tune", "--t1", self.spec, "--budget", "60", "--record", record,
                                 "--max-seconds-per-config", "0.05", env_extra=self.env, timeout=600)
        self.assertEqual(result["outcomes"], {"ok": 60}, json.dumps(result["outcomes"]))
        self.assertLess(result["best"]["error"], 1e-6)
        self.assertEqual(len(result["recorded"]), 2)
        cache = self.ktune_json("replay", "--cache", result["recorded"][0], "--budget", "5", "--repeats", "2")
        self.assertEqual(cache["configs"], 60)

    def test_gpu_wrong_reference_fails_every_config(self):
        self.require_gpu()
        wrong = os.path.join(self.spec_dir, "expected_out.bin")
        with open(wrong, "rb") as file:
            data = bytearray(file.read())
        data[400:800] = bytes(400)  # 100 elements zeroed
        with open(wrong, "wb") as file:
            file.write(data)
        result = self.ktune_json("tune", "--t1", self.spec, "--budget", "5", env_extra=self.env, check=1,
                                 timeout=300)
        self.assertEqual(result["outcomes"], {"wrong_result": 5})


if __name__ == "__main__":
    harness.main()
