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
        result = self.tune_json("--t1", self.spec, "--compile-only", "--arch", "sm_90a",
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
        result = self.tune_json("--t1", spec, "--compile-only", "--fast-compile", "--arch", "gfx90a",
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
        summary = harness.only_result(self, json.loads(result.stdout))
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
        result = self.tune_json("--t1", self.spec, "--budget", "60", "--record", record,
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
        result = self.tune_json("--t1", self.spec, "--budget", "5", env_extra=self.env, check=1,
                                 timeout=300)
        self.assertEqual(result["outcomes"], {"wrong_result": 5})


def harness_values(text):
    """A T1 parameter's Values: a list, or the Python list expression the examples write."""
    if isinstance(text, list):
        return text
    return list(eval(text, {"__builtins__": {"range": range, "list": list}}))  # the spec's own expression


class KernelTunerStyleSpec(harness.KtuneTestCase):
    """tests/data/t1/axpy_in_place: a template kernel (no extern "C"), a ReadWrite vector, a
    MemType Constant array, GridDiv geometry, and no ReferenceArguments: the default config's
    output is the reference. Its configs with tile 4 and use_constant 1 do nothing, on purpose."""

    def setUp(self):
        super().setUp()
        source = os.path.join(harness.ARGS.source_dir, "tests", "data", "t1", "axpy_in_place")
        self.spec_dir = os.path.join(self.dir, "axpy_in_place")
        shutil.copytree(source, self.spec_dir)
        self.spec = os.path.join(self.spec_dir, "axpy_in_place_T1.json")
        self.env = {"KTUNE_CACHE_DIR": os.path.join(self.dir, "cache")}

    def backends(self):
        return {b["backend"]: b for b in self.ktune_json("devices")["backends"]}

    def test_compiles_through_nvrtc_by_name_expression(self):
        backends = self.backends()
        if backends["cuda"]["built"]:
            result = self.tune_json("--t1", self.spec, "--compile-only", "--arch", "sm_90a",
                                     env_extra=self.env, timeout=600)
            self.assertEqual((result["compiled"], result["failed"]), (18, 0), json.dumps(result["failures"][:2]))
            # The symbol NVRTC emitted for "axpy_in_place<float>" is kept beside each binary.
            names = {open(os.path.join(self.dir, "cache", f)).read().strip()
                     for f in os.listdir(os.path.join(self.dir, "cache")) if f.endswith(".entry")}
            self.assertEqual(names, {"_Z13axpy_in_placeIfEvPT_PKS0_S3_i"})

    def cut_spec(self, spec_file, keep_first):
        """A copy of the spec whose parameters keep their Default (and, with keep_first, their
        first value), its KernelFile made absolute; returns its path."""
        with open(spec_file) as file:
            spec = json.load(file)
        kernel = spec["KernelSpecification"]
        kernel["KernelFile"] = os.path.join(os.path.dirname(spec_file), kernel["KernelFile"])
        for parameter in spec["ConfigurationSpace"]["TuningParameters"]:
            kept = {parameter["Default"]}
            if keep_first:
                kept.add(harness_values(parameter["Values"])[0])
            parameter["Values"] = json.dumps(sorted(kept))
        path = os.path.join(self.dir, os.path.basename(spec_file).replace("_T1", "_cut_T1"))
        with open(path, "w") as file:
            json.dump(spec, file)
        return path

    def test_the_kernel_tuner_style_examples_compile_by_name_expression(self):
        """examples/t1-kernels (plain __global__ kernels, a template, a __constant__ array, a
        ReadWrite vector, 2-D tiling) through NVRTC and hiprtc, each space cut to its default
        config (plus each parameter's first value for the __constant__ and template kernels
        through NVRTC), to keep CI short: the full spaces compile and run on the GPU machine
        (ci/gpu-check kernel_tuner)."""
        backends = self.backends()
        examples = os.path.join(harness.ARGS.source_dir, "examples", "t1-kernels")
        for name in sorted(os.listdir(examples)):
            spec_file = os.path.join(examples, name, f"{name}_T1.json")
            if not os.path.exists(spec_file):
                continue
            for backend, arch, extra, keep_first in (("cuda", "sm_90a", [], name in ("conv2d_cmem", "gelu_tpl")),
                                                     ("hip", "gfx90a", ["--fast-compile"], False)):
                if not backends[backend]["built"]:
                    continue
                cut = self.cut_spec(spec_file, keep_first)
                with self.subTest(kernel=name, backend=backend):
                    result = self.tune_json("--t1", cut, "--backend", backend, "--compile-only", "--arch", arch,
                                             *extra, env_extra=self.env, timeout=600)
                    self.assertGreater(result["compiled"], 0)
                    self.assertEqual(result["failed"], 0, json.dumps(result["failures"][:1])[:2000])

    def test_verification_options_are_for_t1_specs(self):
        refused = self.ktune("tune", "--kernel", "rmsnorm", "--no-verify", "--budget", "1", check=2)
        self.assertIn("--no-verify", refused.stderr)
        self.ktune("tune", "--t1", self.spec, "--atol", "-1", "--compile-only", "--arch", "sm_90a", check=2)

    def require_gpu(self):
        cuda = self.backends()["cuda"]
        if not cuda["built"] or not cuda.get("devices"):
            self.skipTest("no CUDA device")

    def test_gpu_default_output_is_the_reference_and_catches_a_wrong_config(self):
        self.require_gpu()
        export = os.path.join(self.dir, "tuned")
        result = self.tune_json("--t1", self.spec, "--strategy", "brute_force", "--budget", "18",
                                 "--max-seconds-per-config", "0.05", "--export-dir", export,
                                 env_extra=self.env, timeout=600, check=0)
        # Every config checked against the default's output: the constant array and the pointer
        # hold the same values, and the ReadWrite vector is restored before each launch, so all
        # agree, except the three that skip their work.
        self.assertEqual(result["reference_config"], {"block_size_x": 128, "tile": 1, "use_constant": 0})
        self.assertEqual(result["outcomes"], {"ok": 15, "wrong_result": 3}, json.dumps(result["outcomes"]))
        self.assertIn("reference config", result["verification"])
        self.assertTrue(result["geometry"]["rule"].startswith("GridDiv"))
        self.assertEqual(result["geometry"]["default"]["launch"]["grid_x"], -(-16777213 // 128))
        self.assertEqual(result["geometry"]["default"]["launch"]["block_x"], 128)
        self.assertEqual(result["implausible"], 0)
        with open(result["header"]) as header:
            text = header.read()
        self.assertIn("use_constant", text)
        self.assertIn("tile", text)

    def test_gpu_outputs_checked_on_the_device_agree_with_the_host_check(self):
        """With KTUNE_OUTPUT_CHECK=device (the default) the reference stays on the GPU and each
        config's outputs are judged there; on the host (KTUNE_OUTPUT_CHECK=host) the same configs get the same outcome
        and the same error figure, to the bit."""
        self.require_gpu()
        figures = {}
        for where in ("device", "host"):
            db = os.path.join(self.dir, f"{where}.db")
            # Each run captures its own reference (a cache shared with the first run would hand the
            # second one a stored reference, and its default config would be checked, not captured).
            # The device check is the default: only the host run names where.
            env = dict(self.env, KTUNE_CACHE_DIR=os.path.join(self.dir, f"cache-{where}"),
                       **({"KTUNE_OUTPUT_CHECK": "host"} if where == "host" else {}))
            self.tune_json("--t1", self.spec, "--strategy", "brute_force", "--budget", "18",
                            "--max-seconds-per-config", "0.01", "--no-export", "--db", db,
                            env_extra=env, timeout=600, check=0)
            rows = self.query("SELECT config_key, outcome, error, environment FROM measurements", db=db)
            figures[where] = {key: (outcome, error) for key, outcome, error, _ in rows}
            checked_on = {json.loads(environment).get("outputs_checked_on") for _, _, _, environment in rows}
            # The reference config itself is captured, not checked.
            self.assertEqual(checked_on - {"none"}, {where})
        self.assertEqual(len(figures["device"]), 18)
        self.assertEqual(figures["device"], figures["host"])
        self.assertEqual(sorted(outcome for outcome, _ in figures["device"].values()).count("wrong_result"), 3)

    def test_gpu_no_verify_flags_what_memory_cannot_deliver(self):
        self.require_gpu()
        result = self.tune_json("--t1", self.spec, "--no-verify", "--strategy", "brute_force",
                                 "--budget", "18", "--max-seconds-per-config", "0.05", "--no-export",
                                 env_extra=self.env, timeout=600)
        self.assertIn("off", result["verification"])
        self.assertEqual(result["outcomes"], {"ok": 18})
        self.assertEqual(result["best"]["error"], -1)
        # The three configs that return at once "move" 200 MB in microseconds.
        self.assertEqual(result["implausible"], 3, result.get("implausible_example"))
        self.assertIn('"tile":4', result["implausible_example"])


if __name__ == "__main__":
    harness.main()
