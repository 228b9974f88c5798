"""Bad input exits 2 with a message naming the value, file or line (and the valid names for
unknown ones); an absent backend exits 3 saying what is missing; a bad database is refused and
left untouched."""
import json
import os

import harness


class BadInput(harness.KtuneTestCase):
    def assert_fails(self, args, code, *fragments):
        result = self.ktune(*args, check=code)
        for fragment in fragments:
            self.assertIn(fragment, result.stderr, f"ktune {' '.join(args)}")
        return result

    def test_unknown_names_list_the_valid_ones(self):
        self.assert_fails(["tune", "--kernel", "rmsnrom"], 2, "unknown kernel 'rmsnrom'; valid kernels: rmsnorm",
                          "swiglu")
        self.assert_fails(["tune", "--kernel", "rmsnorm", "--backend", "opencl"], 2,
                          "unknown backend 'opencl'", "cpu, cuda, hip, vulkan")
        self.assert_fails(["tune", "--kernel", "rmsnorm", "--strategy", "genius"], 2,
                          "unknown strategy 'genius'", "annealing, auto, brute_force, differential_evolution, forest, genetic, random, tpe")
        self.assert_fails(["tune", "--kernel", "rmsnorm", "--precision", "fp13"], 2,
                          "unknown precision 'fp13'", "fp32")
        self.assert_fails(["tune", "--kernel", "rmsnorm", "--precision", "fp8_e4m3"], 2,
                          "not supported by rmsnorm", "fp32, fp16, bf16")

    def test_bad_shapes(self):
        self.assert_fails(["tune", "--kernel", "rmsnorm", "--shape", "rows=4,width=7"], 2,
                          "'width' is not a dimension of rmsnorm", "rows, cols")
        self.assert_fails(["tune", "--kernel", "rmsnorm", "--shape", "rows=0"], 2, "rows=0 must be at least 1")
        self.assert_fails(["tune", "--kernel", "rmsnorm", "--shape", "rows=abc"], 2, "rows=abc is not an integer")
        self.assert_fails(["tune", "--kernel", "rmsnorm", "--shape", "rows256"], 2, "expected dim=value pairs")
        self.assert_fails(["tune", "--kernel", "rmsnorm", "--budget", "0"], 2, "--budget")

    def test_numbers_out_of_range_exit_2(self):
        for option, value in (("--budget", "-1"), ("--budget", "0"), ("--time-limit", "nan"),
                              ("--time-limit", "0"), ("--config-timeout", "0"), ("--config-timeout", "-5"),
                              ("--max-seconds-per-config", "nan"), ("--min-samples", "0"),
                              ("--max-noise", "-1")):
            result = self.ktune("tune", "--kernel", "rmsnorm", option, value, "--db", self.db, "--json")
            self.assertEqual(result.returncode, 2, f"{option} {value}: {result.stderr}")
            self.assertIn(option, result.stderr)
            self.assertEqual(json.loads(result.stdout)["exit_code"], 2)
        self.assert_fails(["tune", "--kernel", "rmsnorm", "--shape", "rows=4000000000,cols=4000000000"], 2,
                          "too large")
        self.assert_fails(["tune", "--kernel", "rmsnorm", "--shape", "rows=1000000,cols=1000000"], 2, "GiB")

    def test_usage_errors_exit_2(self):
        self.ktune("tune", "--no-such-flag", check=2)
        self.ktune(check=2)  # no subcommand
        self.ktune("tune", "--budget", "many", check=2)
        self.assertEqual(self.ktune("tune", "--help", check=0).returncode, 0)

    def test_absent_backends_exit_3(self):
        built = {b["backend"]: b for b in self.ktune_json("devices")["backends"]}
        for backend in ("cuda", "hip", "vulkan"):
            if built[backend]["status"] == "available":
                continue  # a machine with this GPU: nothing is absent
            absent = {"cuda": "no CUDA device", "hip": "no HIP device was found"}
            expected = absent.get(backend, "") if built[backend]["built"] else \
                f"the {backend} backend is not part of this build"
            self.assert_fails(["tune", "--kernel", "rmsnorm", "--backend", backend, "--db", self.db], 3, expected)
        self.assertFalse(os.path.exists(self.db), "a failed start must not create a database")
        if built["cuda"]["built"] and built["cuda"]["status"] != "available":
            result = self.ktune("tune", "--kernel", "rmsnorm", "--backend", "cuda", "--db", self.db, check=3)
            self.assertIn("error 35", result.stderr)  # what the CUDA runtime would say, explained

    def test_bad_search_space_files_name_file_and_place(self):
        path = os.path.join(self.dir, "space.json")
        with open(path, "w") as f:
            f.write('{\n  "family": "rmsnorm",\n  "backend": "cpu",\n  "parameters": [\n}\n')
        self.assert_fails(["tune", "--kernel", "rmsnorm", "--space", path, "--db", self.db], 2,
                          path, "line 5")
        source = os.path.join(harness.ARGS.source_dir, "search_spaces", "rmsnorm.cpu.json")
        with open(source) as f:
            space = json.load(f)
        space["constraints"][1]["expr"] = "threads == 1 or ceil_div(rows, rows_per_task >= threads"
        with open(path, "w") as f:
            json.dump(space, f)
        self.assert_fails(["tune", "--kernel", "rmsnorm", "--space", path, "--db", self.db], 2,
                          "constraints[1]", "column")
        space["constraints"][1]["expr"] = "threads <= no_such_limit"
        with open(path, "w") as f:
            json.dump(space, f)
        self.assert_fails(["tune", "--kernel", "rmsnorm", "--space", path, "--db", self.db], 2, "no_such_limit")
        self.assert_fails(["tune", "--kernel", "swiglu", "--space", source, "--db", self.db], 2,
                          "describes rmsnorm on cpu, not swiglu on cpu")

    def test_bad_databases_are_refused_and_untouched(self):
        cases = {
            "text.db": b"this is not a database\n" * 20,
            "truncated.db": None,  # filled below from a real database cut in half
        }
        real = os.path.join(self.dir, "real.db")
        self.ktune("tune", "--kernel", "rmsnorm", "--shape", "rows=4,cols=64", "--budget", "2",
                   "--db", real, "--no-export", check=0)
        self.ktune("export", "--db", real, "--out", os.path.join(self.dir, "out"), check=0)
        with open(real, "rb") as f:
            data = f.read()
        cases["truncated.db"] = data[: len(data) // 2]
        for name, content in cases.items():
            path = os.path.join(self.dir, name)
            with open(path, "wb") as f:
                f.write(content)
            result = self.ktune("tune", "--kernel", "rmsnorm", "--shape", "rows=4,cols=64", "--budget", "1",
                                "--db", path, "--no-export")
            self.assertEqual(result.returncode, 2, result.stderr)
            self.assertIn(path, result.stderr)
            with open(path, "rb") as f:
                self.assertEqual(f.read(), content, f"{name} was modified")
        self.assert_fails(["export", "--db", os.path.join(self.dir, "missing.db")], 2, "no such database")

    def test_json_errors_are_machine_readable(self):
        result = self.ktune("tune", "--kernel", "nope", "--json", check=2)
        self.assertEqual(json.loads(result.stdout)["exit_code"], 2)


if __name__ == "__main__":
    harness.main()
