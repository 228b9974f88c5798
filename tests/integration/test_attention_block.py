"""attention_block, a family composed of other families' kernels, from the command line: `ktune
list` names its stages, `ktune tune` tunes each stage at its own problem (verified against its
float64 reference) and says what their best medians sum to, the export writes the stages'
tables (the library chooses each stage's config from them), and bad dims are refused naming the
dim."""
import json
import os

import harness

SHAPE = "batch=2,seq=37,hidden=70,heads=4,kv_heads=2,head_dim=32,causal=1,rope=1"
STAGES = ["gemm", "split_heads", "flash_attention", "merge_heads", "gemm"]


class AttentionBlock(harness.KtuneTestCase):
    def test_list_names_its_stages(self):
        kernels = {k["kernel"]: k for k in self.ktune_json("list")["kernels"]}
        self.assertEqual(kernels["attention_block"]["stage_families"], ["gemm", "split_heads", "flash_attention",
                                                                         "merge_heads"])
        self.assertEqual(kernels["attention_block"]["backends"], [])  # no kernel of its own
        self.assertNotIn("stage_families", kernels["gemm"])
        text = self.ktune("list", check=0).stdout
        self.assertIn("those of its stages' families: gemm, split_heads, flash_attention, merge_heads", text)

    def test_tune_tunes_every_stage_at_its_own_problem(self):
        db = os.path.join(self.dir, "block.db")
        document = self.ktune_json("tune", "-k", "attention_block", "-b", "cpu", "--shape", SHAPE, "--db", db,
                                   "--precision", "bf16", "--strategy", "random", "--budget", "3",
                                   "--max-seconds-per-config", "0.01", "--export-dir", "tuned")
        results = document["results"]
        self.assertEqual([r["kernel"] for r in results], STAGES)
        self.assertEqual([r["stage_of"]["stage"] for r in results], [1, 2, 3, 4, 5])
        for r in results:
            self.assertIn("attention_block batch=2 seq=37", r["stage_of"]["problem"])
            self.assertEqual(r["outcomes"].get("ok", 0), sum(r["outcomes"].values()), json.dumps(r["outcomes"]))
        dims = [r["problem"] for r in results]
        self.assertEqual((dims[0]["m"], dims[0]["n"], dims[0]["k"], dims[0]["epilogue"]), (74, 256, 70, 2))
        self.assertEqual((dims[2]["seq_q"], dims[2]["kv_heads"], dims[2]["causal"]), (37, 2, 1))
        self.assertEqual((dims[4]["m"], dims[4]["n"], dims[4]["k"], dims[4]["epilogue"]), (74, 70, 128, 5))
        for family in set(STAGES):
            self.assertTrue(os.path.exists(os.path.join(self.dir, "tuned", "cpu", family + ".json")), family)
        # Exporting the composed family writes its stages' families' tables (what its calls read).
        exported = self.ktune_json("export", "-k", "attention_block", "-b", "cpu", "--db", db, "-o", "exported")
        self.assertEqual(sorted(e["kernel"] for e in exported["exported"]), sorted(set(STAGES)))
        text = self.ktune("tune", "-k", "attention_block", "-b", "cpu", "--shape", SHAPE, "--precision", "bf16",
                          "--strategy", "random", "--budget", "2", "--max-seconds-per-config", "0.01", "--no-export",
                          check=0).stdout
        self.assertIn("stage 3 of 5, flash_attention", text)
        self.assertRegex(text, r"its stages' best medians sum to [0-9.]+ [mun]?s")

    def test_lavapipe_tunes_and_nvrtc_compiles_every_stage(self):
        backends = {b["backend"]: b for b in self.ktune_json("devices")["backends"]}
        if backends["vulkan"]["built"] and backends["vulkan"]["devices"]:
            document = self.ktune_json("tune", "-k", "attention_block", "-b", "vulkan", "--shape",
                                       "batch=1,seq=19,hidden=40,heads=4,kv_heads=2,head_dim=16,causal=1,rope=1",
                                       "--precision", "fp32", "--budget", "3", "--min-samples", "3",
                                       "--max-seconds-per-config", "0.02", "--no-export")
            self.assertEqual([r["kernel"] for r in document["results"]], STAGES)
            for r in document["results"]:
                self.assertEqual(r["outcomes"].get("ok", 0), sum(r["outcomes"].values()), json.dumps(r["outcomes"]))
        if backends["cuda"]["built"]:  # every stage's covering sample for Hopper, no GPU needed
            document = self.ktune_json("tune", "-k", "attention_block", "-b", "cuda", "--compile-only", "--fast-compile",
                                       "--covering-sample", "--arch", "sm_90a", "--precision", "bf16", "--shape",
                                       "batch=1,seq=19,hidden=40,heads=4,kv_heads=2,head_dim=64,causal=1,rope=1",
                                       env_extra={"KTUNE_CACHE_DIR": os.path.join(self.dir, "cubins")}, timeout=900)
            self.assertEqual([r["kernel"] for r in document["results"]], STAGES)
            for r in document["results"]:
                self.assertEqual(r["failed"], 0, json.dumps(r["failures"][:2]))
                self.assertGreater(r["compiled"], 0)

    def test_bad_dims_name_the_dim(self):
        result = self.ktune("tune", "-k", "attention_block", "-b", "cpu", "--shape",
                            "batch=1,seq=8,hidden=64,heads=3,kv_heads=2,head_dim=32", "--budget", "1", check=2)
        self.assertIn("kv_heads (2) must divide heads (3)", result.stderr)
        result = self.ktune("tune", "-k", "attention_block", "-b", "cpu", "--shape",
                            "batch=1,seq=8,hidden=64,heads=2,head_dim=33", "--budget", "1", check=2)
        self.assertIn("head_dim must be even", result.stderr)
        # One space file cannot serve five stages of four families.
        space = os.path.join(self.dir, "gemm.cpu.json")
        with open(space, "w") as f:
            f.write(open(os.path.join(harness.ARGS.source_dir, "search_spaces", "gemm.cpu.json")).read())
        result = self.ktune("tune", "-k", "attention_block", "-b", "cpu", "--shape", SHAPE, "--space", space,
                            "--budget", "1", check=2)
        self.assertIn("tune a stage's family with --space instead", result.stderr)


if __name__ == "__main__":
    harness.main()
