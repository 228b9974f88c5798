"""tune -> database -> export -> a consumer program compiled against the generated header."""
import json
import os
import subprocess

import harness


FAST = ["--max-seconds-per-config", "0.05", "--min-samples", "5"]


class EndToEnd(harness.KtuneTestCase):
    def test_tune_store_export_consume(self):
        shape = "rows=64,cols=1000"
        summary = self.tune_json("--kernel", "rmsnorm", "--backend", "cpu", "--shape", shape,
                                  "--budget", "12", "--db", self.db, *FAST)
        # The CLI contract of `ktune tune --json`.
        for key in ("kernel", "backend", "device", "problem", "space", "evaluated", "reused", "outcomes", "best"):
            self.assertIn(key, summary)
        self.assertEqual(summary["kernel"], "rmsnorm")
        self.assertEqual(summary["problem"], {"rows": 64, "cols": 1000, "precision": "fp32"})
        self.assertEqual(summary["evaluated"], 12)
        self.assertEqual(summary["reused"], 0)
        self.assertEqual(summary["outcomes"], {"ok": 12})
        self.assertGreater(summary["space"]["valid"], 12)
        self.assertGreaterEqual(summary["space"]["total"], summary["space"]["valid"])
        best = summary["best"]
        self.assertEqual(set(best["config"]), {"threads", "rows_per_task", "vector_width", "unroll"})
        self.assertGreater(best["median_ns"], 0)
        self.assertLess(best["error"], 1e-5)

        # Every result is in the database with its samples.
        rows = self.query("SELECT outcome, sample_count, samples FROM measurements")
        self.assertEqual(len(rows), 12)
        for outcome, count, samples in rows:
            self.assertEqual(outcome, "ok")
            self.assertEqual(len(json.loads(samples)), count)
            self.assertGreaterEqual(count, 5)
        run = self.query("SELECT command, status, argv FROM runs")
        self.assertEqual(run[0][:2], ("tune", "finished"))
        self.assertIn("rmsnorm", run[0][2])

        # The header exists (tune exports) and `ktune export` rewrites it.
        header = os.path.join(self.dir, "tuned", "cpu", "rmsnorm.hpp")
        self.assertTrue(os.path.exists(header))
        exported = self.ktune_json("export", "--db", self.db, "--out", "tuned")
        self.assertEqual(exported["exported"][0]["kernel"], "rmsnorm")
        self.assertEqual(exported["exported"][0]["entries"], 1)
        with open(header) as f:
            text = f.read()
        self.assertIn("DO NOT EDIT", text.upper())
        with open(os.path.join(self.dir, "tuned", "cpu", "rmsnorm.json")) as f:
            table = json.load(f)
        entry = table["entries"][0]

        # A downstream program built against the fresh header gets the tuned config on this
        # device and shape, and the default for an unknown device.
        consumer = os.path.join(self.dir, "consumer")
        subprocess.run([harness.ARGS.cxx, "-std=c++20", "-Wall", "-Wextra", "-Werror",
                        "-I", os.path.join(self.dir, "tuned"),
                        os.path.join(harness.ARGS.source_dir, "tests", "consumer", "consumer.cpp"),
                        "-o", consumer], check=True)
        device = summary["device"]
        tuned = subprocess.run([consumer, "--backend", "cpu", "--device", device,
                                "--architecture", entry["device"]["architecture"],
                                "--vendor", entry["device"]["vendor"],
                                "--rows", "64", "--cols", "1000"], capture_output=True, text=True, check=True)
        words = dict(w.split("=", 1) for w in tuned.stdout.split())
        self.assertEqual(words["level"], "device")
        for name, value in best["config"].items():
            self.assertEqual(words[name], str(value), tuned.stdout)

        unknown = subprocess.run([consumer, "--backend", "cpu", "--device", "Imaginary CPU 9000",
                                  "--architecture", "riscv64", "--vendor", "nobody",
                                  "--rows", "64", "--cols", "1000"], capture_output=True, text=True, check=True)
        words = dict(w.split("=", 1) for w in unknown.stdout.split())
        self.assertEqual(words["level"], "default_config")
        self.assertEqual(words["rows_per_task"], "16")  # search_spaces/rmsnorm.cpu.json "default"

    def test_export_of_what_the_database_lacks_writes_nothing(self):
        # A database with CPU results only: exporting CUDA, or a CPU kernel never tuned, is refused
        # (exit 2, bad input: the options select nothing), names what the database does hold, and
        # leaves no empty header behind.
        for kernel in ("rmsnorm", "swiglu"):
            self.tune_json("--kernel", kernel, "--backend", "cpu", "--shape", "rows=8,cols=64",
                            "--budget", "2", "--db", self.db, "--no-export", *FAST)
        out = os.path.join(self.dir, "tuned")
        holds = "it has results for: cpu (2 entries: rmsnorm, swiglu)"
        cases = [(["-b", "cuda"], "the database " + self.db + " holds no results for backend cuda; " + holds),
                 (["-b", "cuda", "-k", "rmsnorm"], "holds no results for backend cuda"),
                 (["-b", "cpu", "-k", "softmax"],
                  "the database " + self.db + " holds no results for kernel softmax on backend cpu; " + holds)]
        for args, message in cases:
            with self.subTest(args=args):
                result = self.ktune("export", "--db", self.db, "--out", out, *args, check=2)
                self.assertIn(message, result.stderr)
                self.assertFalse(os.path.exists(out), os.listdir(out) if os.path.exists(out) else "")
                document = self.ktune_json("export", "--db", self.db, "--out", out, *args, check=2)
                self.assertIn(message, document["error"])
        # Without --kernel only the kernels with results for the backend are exported.
        exported = self.ktune_json("export", "--db", self.db, "--out", out, "-b", "cpu")
        self.assertEqual([e["kernel"] for e in exported["exported"]], ["rmsnorm", "swiglu"])

    def test_rerun_is_a_resume(self):
        def tune(budget):
            return self.tune_json("--kernel", "swiglu", "--shape", "rows=16,cols=333",
                                   "--budget", str(budget), "--db", self.db, *FAST)
        first = tune(8)
        self.assertEqual((first["evaluated"], first["reused"]), (8, 0))
        again = tune(8)
        self.assertEqual((again["evaluated"], again["reused"]), (0, 8))
        self.assertEqual(again["best"]["config"], first["best"]["config"])
        bigger = tune(12)
        self.assertEqual((bigger["evaluated"], bigger["reused"]), (4, 8))
        self.assertEqual(self.query("SELECT COUNT(*) FROM measurements")[0][0], 12)
        self.assertEqual(self.query("SELECT COUNT(*) FROM runs")[0][0], 3)

    def test_random_strategy_is_seeded(self):
        base = ["tune", "--kernel", "rmsnorm", "--shape", "rows=8,cols=64", "--strategy", "random",
                "--budget", "6", "--no-export", *FAST]
        a = harness.only_result(self, self.ktune_json(*base, "--seed", "5", "--db", os.path.join(self.dir, "a.db")))
        b = harness.only_result(self, self.ktune_json(*base, "--seed", "5", "--db", os.path.join(self.dir, "b.db")))
        c = harness.only_result(self, self.ktune_json(*base, "--seed", "6", "--db", os.path.join(self.dir, "c.db")))
        configs = lambda name: sorted(r[0] for r in self.query("SELECT config FROM measurements",
                                                                db=os.path.join(self.dir, name)))
        self.assertEqual(configs("a.db"), configs("b.db"))
        self.assertNotEqual(configs("a.db"), configs("c.db"))
        self.assertEqual(a["evaluated"], 6)

    def test_every_precision_on_odd_shapes(self):
        for kernel in ("rmsnorm", "swiglu"):
            for precision in ("fp32", "fp16", "bf16"):
                summary = self.tune_json("--kernel", kernel, "--shape", "rows=7,cols=1001",
                                          "--precision", precision, "--budget", "6", "--db", self.db,
                                          "--no-export", *FAST)
                self.assertEqual(summary["outcomes"], {"ok": 6}, (kernel, precision))
                self.assertEqual(summary["problem"]["precision"], precision)

    def test_time_limit_stops_the_tune(self):
        summary = self.tune_json("--kernel", "rmsnorm", "--shape", "rows=512,cols=4096",
                                  "--time-limit", "1", "--db", self.db, "--no-export",
                                  "--max-seconds-per-config", "0.1")
        self.assertEqual(summary["stop_reason"], "time limit reached")
        self.assertLess(summary["evaluated"], summary["space"]["valid"])
        self.assertLess(summary["seconds"], 5)
        # Reused results count toward the limit with the time they took, so an identical rerun
        # stops where the first one did and measures nothing new.
        again = self.tune_json("--kernel", "rmsnorm", "--shape", "rows=512,cols=4096",
                                "--time-limit", "1", "--db", self.db, "--no-export",
                                "--max-seconds-per-config", "0.1")
        self.assertEqual(again["evaluated"], 0)
        self.assertEqual(again["reused"], summary["evaluated"])
        self.assertEqual(again["best"]["config"], summary["best"]["config"])

    def test_devices_list_space(self):
        devices = self.ktune_json("devices")
        cpu = [b for b in devices["backends"] if b["backend"] == "cpu"][0]
        self.assertEqual(cpu["status"], "available")
        self.assertGreaterEqual(cpu["devices"][0]["limits"]["hardware_threads"], 1)
        kernels = {k["kernel"] for k in self.ktune_json("list")["kernels"]}
        self.assertTrue({"rmsnorm", "swiglu"} <= kernels)
        self.assertNotIn("fault_injection", kernels)
        space = self.ktune_json("space", "--kernel", "rmsnorm", "--backend", "cpu")
        self.assertEqual(set(space) >= {"total", "valid", "seconds"}, True)
        self.assertEqual(space["total"], 8 * 7 * 4 * 3)
        t1 = os.path.join(harness.ARGS.source_dir, "..", "shared", "data", "kernel_tuner_caches",
                          "convolution_milo_T1.json")
        if os.path.exists(t1):
            self.assertEqual(self.ktune_json("space", "--t1", t1)["valid"], 4362)


if __name__ == "__main__":
    harness.main()
