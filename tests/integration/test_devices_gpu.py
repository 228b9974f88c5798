"""ktune tune --devices all on a host with two or more GPUs (label gpu; ci/gpu-check scaling runs
it on the 4-GPU H200 machine): every GPU measures, every result is verified and recorded under
one device, and a rerun reuses them all. Skips without two CUDA devices."""
import json
import os

import harness

TUNE = ["tune", "--kernel", "rmsnorm", "--backend", "cuda", "--shape", "rows=4096,cols=4096",
        "--precision", "bf16", "--strategy", "random", "--seed", "9", "--no-export",
        "--max-seconds-per-config", "0.05"]


class MultiGpu(harness.KtuneTestCase):
    def setUp(self):
        super().setUp()
        devices = self.ktune_json("devices")
        cuda = next(b for b in devices["backends"] if b["backend"] == "cuda")
        self.count = cuda["devices"][0]["properties"].get("device_count", 0) if cuda.get("devices") else 0
        if self.count < 2:
            self.skipTest(f"needs two or more CUDA devices; this host has {self.count}")

    def test_every_gpu_measures_and_results_share_one_device(self):
        budget = 16 * self.count
        summary = harness.only_result(self, self.ktune_json(*TUNE, "--devices", "all", "--budget", str(budget), "--db", self.db, timeout=900))
        self.assertEqual(summary["devices"], [f"cuda:{i}" for i in range(self.count)])
        self.assertEqual(summary["outcomes"], {"ok": budget}, json.dumps(summary["outcomes"]))
        where = [json.loads(r[0])["measured_on"] for r in self.query("SELECT environment FROM measurements")]
        for i in range(self.count):
            self.assertIn(f"cuda:{i}", where, f"cuda:{i} measured nothing")
        self.assertEqual(self.query("SELECT COUNT(*) FROM devices")[0][0], 1)
        again = harness.only_result(self, self.ktune_json(*TUNE, "--devices", "all", "--budget", str(budget), "--db", self.db))
        self.assertEqual((again["evaluated"], again["reused"]), (0, budget))


if __name__ == "__main__":
    harness.main()
