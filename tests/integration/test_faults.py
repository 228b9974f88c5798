"""Variants that crash, abort, hang, compute wrong results or NaN, or decline to run: each is
recorded with its outcome and message, the worker is restarted, and tuning goes on."""
import harness

TEST_FAMILIES = {"KTUNE_ENABLE_TEST_FAMILIES": "1"}


class Faults(harness.KtuneTestCase):
    def test_every_fault_is_classified_and_tuning_continues(self):
        summary = self.ktune_json("tune", "--kernel", "fault_injection", "--shape", "n=5000",
                                  "--db", self.db, "--config-timeout", "2", "--no-export",
                                  "--max-seconds-per-config", "0.02", env_extra=TEST_FAMILIES)
        self.assertEqual(summary["space"]["valid"], 9)
        self.assertEqual(summary["outcomes"], {"ok": 3, "crashed": 2, "timeout": 1, "wrong_result": 2,
                                               "unsupported": 1})
        self.assertEqual(summary["best"]["config"], {"behaviour": "ok", "work": 1})
        rows = dict(self.query("SELECT json_extract(config, '$.behaviour') || '/' || outcome, message "
                               "FROM measurements WHERE json_extract(config, '$.work') = 1"))
        self.assertIn("signal 11", rows["crash/crashed"])
        self.assertIn("signal 6", rows["abort/crashed"])
        self.assertIn("no answer within 2.0 s", rows["hang/timeout"])
        self.assertIn("relative L2 error", rows["wrong/wrong_result"])
        self.assertIn("NaN", rows["nan/wrong_result"])
        self.assertIn("declines", rows["unsupported/unsupported"])
        # A rerun reuses the failures too: a crashing config is not run again.
        again = self.ktune_json("tune", "--kernel", "fault_injection", "--shape", "n=5000", "--db", self.db,
                                "--config-timeout", "2", "--no-export", env_extra=TEST_FAMILIES)
        self.assertEqual((again["evaluated"], again["reused"]), (0, 9))

    def test_test_family_is_hidden_by_default(self):
        result = self.ktune("tune", "--kernel", "fault_injection", "--db", self.db, check=2)
        self.assertIn("unknown kernel 'fault_injection'", result.stderr)


if __name__ == "__main__":
    harness.main()
