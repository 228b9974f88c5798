"""The flash_attention family end to end without a GPU: CPU tunes verified against the float64
reference on odd lengths (seq 1, causal with seq_q != seq_kv both ways, grouped-query heads) in
three precisions, the shape syntax of the docs, which CUDA paths each architecture, precision and
head size admits, the header's exact matching of head size and mask and its untuned starting
points per kind of GPU, and clear errors."""
import json
import os
import subprocess

import harness

ODD_SHAPES = ["batch=1,heads=2,seq_q=77,seq_kv=77,head_dim=64,causal=1",  # the documented example
              "batch=1,heads=1,seq_q=1,seq_kv=1,head_dim=64",
              "batch=2,heads=4,kv_heads=2,seq_q=33,seq_kv=1000,head_dim=128,causal=1",
              "batch=1,heads=3,kv_heads=1,seq_q=1000,seq_kv=77,head_dim=64,causal=1",
              "batch=1,heads=2,seq_q=5,seq_kv=4097,head_dim=80"]


class FlashAttention(harness.KtuneTestCase):
    def test_cpu_tunes_verify_on_odd_lengths(self):
        for shape in ODD_SHAPES:
            for precision in ("fp32", "fp16", "bf16"):
                with self.subTest(shape=shape, precision=precision):
                    result = self.tune_json("-k", "flash_attention", "-b", "cpu", "--shape", shape,
                                             "--precision", precision, "--strategy", "random", "--budget", "4",
                                             "--no-export", "--max-seconds-per-config", "0.01")
                    self.assertEqual(list(result["outcomes"]), ["ok"])  # seq 1 has fewer than 4 configs
                    self.assertLess(result["best"]["error"], {"fp32": 1e-5, "fp16": 1e-3, "bf16": 1e-2}[precision])
                    self.assertGreater(result["best"]["flops_per_second"], 0)

    def test_cuda_paths_only_where_they_apply(self):
        def valid(shape, precision, arch="sm_90a"):
            return self.ktune_json("space", "-k", "flash_attention", "-b", "cuda", "--arch", arch, "--shape", shape,
                                   "--precision", precision)["valid"]
        shape = "batch=1,heads=16,seq_q=4096,seq_kv=4096,head_dim={}"
        # The portable simt path takes every GPU, so sm_75 (before mma.sync) counts its configs alone.
        simt_fp32 = valid(shape.format(128), "fp32", "sm_75")
        self.assertGreater(simt_fp32, 0)
        self.assertEqual(valid(shape.format(128), "fp32"), simt_fp32)  # tensor cores take fp16/bf16 only
        hopper, ampere = valid(shape.format(128), "bf16"), valid(shape.format(128), "bf16", "sm_80")
        self.assertGreater(ampere, valid(shape.format(128), "bf16", "sm_75"))  # mma.sync on top of simt
        self.assertGreater(hopper, ampere)  # the wgmma path on top of mma.sync
        self.assertEqual(valid(shape.format(80), "bf16"), valid(shape.format(80), "bf16", "sm_80"))  # wgmma: 64/128 only
        self.assertEqual(valid(shape.format(72), "bf16"), valid(shape.format(72), "bf16", "sm_75"))  # mma.sync: multiples of 16

    def test_header_matches_head_size_and_mask_exactly(self):
        db = os.path.join(self.dir, "fa.db")
        for causal in ("0", "1"):
            self.tune_json("-k", "flash_attention", "-b", "cpu", "--db", db, "--export-dir", "tuned",
                            "--shape", f"batch=1,heads=2,seq_q=64,seq_kv=64,head_dim=64,causal={causal}",
                            "--budget", "2", "--max-seconds-per-config", "0.01")
        header = open(os.path.join(self.dir, "tuned", "cpu", "flash_attention.hpp")).read()
        self.assertIn("head_dim", header)
        self.assertRegex(header, r"Option dims \([^)]*causal[^)]*\) must match exactly")
        self.assertRegex(header, r"Option dims \([^)]*head_dim[^)]*\) must match exactly")
        exported = json.load(open(os.path.join(self.dir, "tuned", "cpu", "flash_attention.json")))
        self.assertEqual(len(exported["entries"]), 2)
        # The untuned starting points per kind of GPU ride along, marked untuned, and compile.
        self.assertEqual([d["target"] for d in exported["architecture_defaults"]],
                         ["ampere", "hopper", "rdna3", "apple", "fallback"])
        self.assertFalse(any(d["tuned"] for d in exported["architecture_defaults"]))
        with open(os.path.join(self.dir, "use.cpp"), "w") as f:
            f.write('#include "cpu/flash_attention.hpp"\n'
                    'namespace t = ktune::tuned::cpu::flash_attention;\n'
                    'static_assert(t::architecture_default("hopper")->block_kv == 256);\n'
                    'static_assert(t::architecture_default("hopper")->head_dim == 128);\n'
                    'static_assert(t::architecture_default("an unknown gpu")->precision == "fp32");\n'
                    'static_assert(!t::architecture_default("ampere")->tuned);\n'
                    'int main() { return 0; }\n')
        compiled = subprocess.run(["c++", "-std=c++20", "-Wall", "-Werror", "-fsyntax-only",
                                   "-I", os.path.join(self.dir, "tuned"), os.path.join(self.dir, "use.cpp")],
                                  capture_output=True, text=True)
        self.assertEqual(compiled.returncode, 0, compiled.stderr)

    def test_bad_shapes_are_bad_input(self):
        for shape, named in (("heads=4,kv_heads=3", "must divide"), ("causal=2", "causal"),
                             ("seq_q=0", "seq_q=0"), ("rows=5", "rows")):
            with self.subTest(shape=shape):
                result = self.ktune("tune", "-k", "flash_attention", "-b", "cpu", "--shape", shape, "--budget", "1",
                                    check=2)
                self.assertIn(named, result.stderr)


if __name__ == "__main__":
    harness.main()
