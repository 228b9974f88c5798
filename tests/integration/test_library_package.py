"""ktune::kernels used the way an outside project uses it: the installed CMake package, found by
find_package(ktune) from examples/kernels-consumer built in a folder outside the source tree.

- Every family, at its descriptor's odd shapes, in every precision it takes, is called on the
  CPU, and each family with a Vulkan shader in every precision the Vulkan backend takes on Vulkan
  (when the build has it and a device, such as lavapipe, is present); each result is checked
  against the float64 reference; the C interface is checked as well.
- The tune -> export -> rebuild loop: two families are tuned on the CPU (and rmsnorm on Vulkan
  where there is a device), exported, and the library is rebuilt on its own (KTUNE_BUILD_TOOL=OFF)
  with that folder as KTUNE_TUNED_DIR; its calls then run the exported entries (checked by
  measurement id), at the tuned shape and (CPU) at a shape near it, still verified.
"""
import json
import os
import shutil
import subprocess

import harness

CONSUMER = os.path.join("examples", "kernels-consumer")


def generator_flags():
    flags = []
    if shutil.which("ninja"):
        flags += ["-G", "Ninja"]
    if shutil.which("ccache"):
        flags += ["-DCMAKE_CXX_COMPILER_LAUNCHER=ccache", "-DCMAKE_C_COMPILER_LAUNCHER=ccache"]
    return flags


class LibraryPackage(harness.KtuneTestCase):
    def path(self, name):
        return os.path.join(self.dir, name)

    def run_checked(self, command, timeout=1500, **kwargs):
        result = subprocess.run(command, capture_output=True, text=True, timeout=timeout, **kwargs)
        self.assertEqual(result.returncode, 0, " ".join(command) + "\n" + result.stdout[-6000:] + result.stderr[-6000:])
        return result.stdout

    def build_consumer(self, prefix, name):
        source = os.path.join(self.dir, name)
        shutil.copytree(os.path.join(harness.ARGS.source_dir, CONSUMER), source)
        build = os.path.join(source, "build")
        self.run_checked(["cmake", "-S", source, "-B", build, f"-DCMAKE_PREFIX_PATH={prefix}",
                          f"-DCMAKE_CXX_COMPILER={harness.ARGS.cxx}", *generator_flags()])
        self.run_checked(["cmake", "--build", build])
        return build

    def families(self):
        listed = self.ktune_json("list")["kernels"]
        out = []
        for entry in listed:
            with open(os.path.join(harness.ARGS.source_dir, "kernels", entry["kernel"], "family.json")) as f:
                descriptor = json.load(f)
            if not descriptor.get("test_only"):
                out.append((entry, descriptor))
        return out

    def write_plan(self, lines):
        path = self.path(f"plan-{len(lines)}-{lines[0].split()[0]}.txt")
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        return path

    def check_calls(self, build, plan, backend):
        result = subprocess.run([os.path.join(build, "check_calls"), plan, "--backend", backend],
                                capture_output=True, text=True, timeout=900)
        self.assertEqual(result.returncode, 0, result.stdout[-8000:] + result.stderr[-4000:])
        return result.stdout

    def test_every_family_at_odd_shapes_through_the_installed_package(self):
        prefix = self.path("prefix")
        build_dir = os.path.dirname(harness.ARGS.ktune)
        self.run_checked(["cmake", "--install", build_dir, "--prefix", prefix])
        self.assertTrue(os.path.isfile(os.path.join(prefix, "lib", "cmake", "ktune", "ktuneConfig.cmake")))
        self.assertTrue(os.path.isfile(os.path.join(prefix, "include", "ktune", "kernels.h")))
        consumer = self.build_consumer(prefix, "consumer")

        lines = []
        for entry, descriptor in self.families():
            for shape in descriptor["shapes"]["odd"]:
                dims = ",".join(f"{k}={v}" for k, v in shape.items())
                lines += [f"{entry['kernel']} {precision} {dims}" for precision in entry["precisions"]]
        plan = self.write_plan(lines)
        out = self.check_calls(consumer, plan, "cpu")
        self.assertIn(f"calls={len(lines)} failed=0", out)
        self.assertEqual(out.count(" ok\n"), len(lines), out)
        self.assertEqual(len(self.families()), len({line.split()[0] for line in lines}))

        c_calls = subprocess.run([os.path.join(consumer, "c_calls")], capture_output=True, text=True, timeout=120)
        self.assertEqual(c_calls.returncode, 0, c_calls.stdout + c_calls.stderr)
        self.assertNotIn("FAILED", c_calls.stdout)

        # The generated typed functions (ktune/families.hpp), installed with the package.
        typed = subprocess.run([os.path.join(consumer, "typed_calls")], capture_output=True, text=True, timeout=120)
        self.assertEqual(typed.returncode, 0, typed.stdout + typed.stderr)
        self.assertEqual(typed.stdout.count(" ok\n"), 2, typed.stdout)

        # Vulkan: each family with a shader at the same shapes, in the precisions the Vulkan backend
        # takes (`ktune list` says which), when the build has the backend and a device is there.
        devices = self.ktune_json("devices")["backends"]
        vulkan = next((b for b in devices if b["backend"] == "vulkan"), None)
        if vulkan and vulkan.get("devices"):
            shaders = []
            for entry, descriptor in self.families():
                backend = next((b for b in entry["backends"] if b["backend"] == "vulkan"), None)
                if backend is None:
                    continue
                for shape in descriptor["shapes"]["odd"]:
                    dims = ",".join(f"{k}={v}" for k, v in shape.items())
                    shaders += [f"{entry['kernel']} {precision} {dims}" for precision in backend["precisions"]]
            self.assertTrue(shaders)
            out = self.check_calls(consumer, self.write_plan(shaders), "vulkan")
            self.assertIn(f"calls={len(shaders)} failed=0", out)
            self.assertEqual(out.count(" ok\n"), len(shaders), out)

    def test_a_fresh_export_is_compiled_into_the_library_and_used(self):
        db = self.path("tuned.db")
        tuned_shapes = {"rmsnorm": "rows=37,cols=1001", "softmax": "rows=64,cols=512"}
        for family, shape in tuned_shapes.items():
            self.tune_json("--kernel", family, "--backend", "cpu", "--shape", shape, "--budget", "8",
                            "--db", db, "--no-export", "--max-seconds-per-config", "0.02")
        exported = self.ktune_json("export", "--db", db, "--backend", "cpu", "--out", self.path("tuned"))
        self.assertEqual(sorted(e["kernel"] for e in exported["exported"]), ["rmsnorm", "softmax"])
        # On Vulkan too, where the build has it and a device (lavapipe) is there: rmsnorm tuned
        # on it, exported, compiled in and used.
        devices = {b["backend"]: b for b in self.ktune_json("devices")["backends"]}
        vulkan = bool(devices.get("vulkan", {}).get("devices"))
        if vulkan:
            self.tune_json("--kernel", "rmsnorm", "--backend", "vulkan", "--shape", "rows=37,cols=1001",
                            "--budget", "6", "--db", db, "--no-export", "--max-seconds-per-config", "0.02")
            exported = self.ktune_json("export", "--db", db, "--backend", "vulkan", "--kernel", "rmsnorm",
                                       "--out", self.path("tuned"))
            self.assertEqual(exported["exported"][0]["entries"], 1)

        # The library alone, rebuilt with this machine's tables (the README's loop).
        build = self.path("library-build")
        prefix = self.path("library-prefix")
        self.run_checked(["cmake", "-S", harness.ARGS.source_dir, "-B", build, "-DKTUNE_BUILD_TOOL=OFF",
                          "-DKTUNE_BUILD_TESTS=OFF", "-DKTUNE_ONLY_FAMILIES=rmsnorm;softmax",
                          "-DKTUNE_WITH_CUDA=OFF", "-DKTUNE_WITH_HIP=OFF",
                          f"-DKTUNE_WITH_VULKAN={'ON' if vulkan else 'OFF'}",
                          "-DKTUNE_WITH_MPI=OFF", "-DCMAKE_BUILD_TYPE=None", "-DCMAKE_CXX_FLAGS=-O1",
                          "-DKTUNE_CPU_KERNEL_FLAGS=-O1", f"-DKTUNE_TUNED_DIR={self.path('tuned')}",
                          f"-DCMAKE_INSTALL_PREFIX={prefix}", f"-DCMAKE_CXX_COMPILER={harness.ARGS.cxx}",
                          *generator_flags()])
        self.run_checked(["cmake", "--build", build, "-j", str(os.cpu_count() or 2)])
        self.run_checked(["cmake", "--install", build])
        consumer = self.build_consumer(prefix, "tuned-consumer")

        lines = []
        for family, shape in tuned_shapes.items():
            with open(self.path(os.path.join("tuned", "cpu", f"{family}.json"))) as f:
                [entry] = json.load(f)["entries"]
            exact = ",".join(f"{k}={v}" for k, v in entry["shape"].items())
            near = ",".join(f"{k}={v + 3}" for k, v in entry["shape"].items())
            lines += [f"{family} fp32 {exact} tuned={entry['measurement_id']}",
                      f"{family} fp32 {near} tuned={entry['measurement_id']}"]
        out = self.check_calls(consumer, self.write_plan(lines), "cpu")
        self.assertIn(f"calls={len(lines)} failed=0", out)
        self.assertEqual(out.count("source=tuned level=device"), len(lines), out)
        if vulkan:
            with open(self.path(os.path.join("tuned", "vulkan", "rmsnorm.json"))) as f:
                [entry] = json.load(f)["entries"]
            exact = ",".join(f"{k}={v}" for k, v in entry["shape"].items())
            lines = [f"rmsnorm fp32 {exact} tuned={entry['measurement_id']}"]
            out = self.check_calls(consumer, self.write_plan(lines), "vulkan")
            self.assertIn("calls=1 failed=0", out)
            self.assertIn("backend=vulkan source=tuned level=device", out)


if __name__ == "__main__":
    harness.main()
