"""How busy a tune kept its device: `device_use` in `tune --json`, the summary's `device` line
and the run's row in the database (kernel_share, between_share, configs_per_minute)."""
import re

import harness


FAST = ["--max-seconds-per-config", "0.02", "--min-samples", "3"]
TUNE = ["--kernel", "rmsnorm", "--backend", "cpu", "--shape", "rows=64,cols=256", "--budget", "5", "--no-export"]


class DeviceUse(harness.KtuneTestCase):
    def assert_shares(self, use):
        self.assertEqual(set(use), {"kernel_share", "between_share", "busy_share", "configs_per_minute"})
        for name in ("kernel_share", "between_share", "busy_share"):
            self.assertGreaterEqual(use[name], 0, name)
            self.assertLessEqual(use[name], 1, name)
        self.assertAlmostEqual(use["busy_share"], use["kernel_share"] + use["between_share"], places=12)

    def run_row(self, run_id):
        return self.query("SELECT status, kernel_share, between_share, configs_per_minute FROM runs WHERE id = ?",
                          (run_id,))[0]

    def test_json_and_runs_row(self):
        summary = self.tune_json(*TUNE, "--db", self.db, *FAST)
        self.assertEqual(summary["evaluated"], 5)
        use = summary["device_use"]
        self.assert_shares(use)
        self.assertGreater(use["configs_per_minute"], 0)
        # The CPU backend times its samples through the engine: the cores were busy with the
        # variants for part of the tune, and the time each sample's launch took is counted.
        self.assertGreater(use["kernel_share"], 0)
        self.assertGreater(use["busy_share"], 0)
        # 5 configs over the tune's wall time.
        self.assertAlmostEqual(use["configs_per_minute"], 5 / (summary["seconds"] / 60), delta=1e-6 * use["configs_per_minute"])

        status, kernel_share, between_share, per_minute = self.run_row(summary["run_id"])
        self.assertEqual(status, "finished")
        self.assertIsNotNone(kernel_share)
        self.assertIsNotNone(between_share)
        self.assertAlmostEqual(kernel_share, use["kernel_share"], places=12)
        self.assertAlmostEqual(between_share, use["between_share"], places=12)
        self.assertAlmostEqual(per_minute, use["configs_per_minute"], places=6)

        # A rerun reuses every result: nothing measured, so no device time and no rate.
        again = self.tune_json(*TUNE, "--db", self.db, *FAST)
        self.assertEqual((again["evaluated"], again["reused"]), (0, 5))
        self.assertEqual(again["device_use"], {"kernel_share": 0, "between_share": 0, "busy_share": 0,
                                               "configs_per_minute": 0})
        self.assertEqual(self.run_row(again["run_id"])[1:], (0.0, 0.0, 0.0))

    def test_summary_line(self):
        result = self.ktune("tune", *TUNE, "--db", self.db, *FAST, check=0)
        line = re.search(r"^  device +busy (\d+)% \(kernels (\d+)%, evictions and restores (\d+)%\), "
                         r"([\d.]+) configs/min$", result.stdout, re.MULTILINE)
        self.assertIsNotNone(line, result.stdout)
        busy, kernels, between, per_minute = line.groups()
        self.assertLessEqual(int(busy), 100)
        self.assertLessEqual(abs(int(busy) - int(kernels) - int(between)), 1)  # each rounded
        self.assertGreater(float(per_minute), 0)


if __name__ == "__main__":
    harness.main()
