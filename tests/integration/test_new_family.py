"""A new kernel family added the way kernels/README.md says (its folder, its descriptor, its
search space and one line in kernels/CMakeLists.txt) in a copy of the source tree: the copy builds,
the family is listed, tuned on the CPU and exported. Its source hash follows what its kernel
includes: editing a header it includes has it measured afresh; editing a header it does not
include leaves its stored results in use.

The copy builds the CPU backend and three families only (KTUNE_ONLY_FAMILIES), unoptimised, so
the test costs minutes, not the full build's quarter hour.
"""
import json
import os
import shutil
import subprocess
import tempfile
import unittest

import harness

FAMILY_JSON = """{
  "family": "scale",
  "sources": {"family": ["family.cpp"], "cpu": ["cpu.cpp"]},
  "shapes": {"odd": [{"n": 1}, {"n": 10001}], "bench": {"n": 1048576}}
}
"""

SCALE_HPP = """// Scale: out[i] = kScaleFactor * x[i]. Tensors: x [n] (input), out [n] (output).
#pragma once

#include "kernels/family.hpp"

namespace ktune {

inline constexpr double kScaleFactor = 2.0;

const KernelFamily& scale_family();
const CpuKernel& scale_cpu_kernel();

}  // namespace ktune
"""

FAMILY_CPP = """#include "kernels/scale/scale.hpp"

namespace ktune {
namespace {

class ScaleFamily final : public KernelFamily {
 public:
  std::string name() const override { return "scale"; }
  std::string summary() const override { return "out = 2 x, a family added by a test"; }
  std::vector<DimSpec> dims() const override { return {{"n", 4096, "elements"}}; }
  std::vector<Precision> precisions() const override { return {Precision::fp32}; }
  std::vector<TensorSpec> tensors(const Problem& problem) const override {
    return {{"x", problem.dim("n"), false}, {"out", problem.dim("n"), true}};
  }
  double flop_count(const Problem& problem) const override { return static_cast<double>(problem.dim("n")); }
  void reference(const Problem& problem, HostTensors& tensors) const override {
    const auto named = named_tensors(problem, tensors);
    const std::vector<double>& x = named.at("x");
    std::vector<double>& out = named.at("out");
    for (std::int64_t i = 0; i < problem.dim("n"); ++i) out[i] = kScaleFactor * x[i];
  }
  const CpuKernel* cpu_kernel() const override { return &scale_cpu_kernel(); }
};

}  // namespace

const KernelFamily& scale_family() {
  static const ScaleFamily family;
  return family;
}

}  // namespace ktune
"""

CPU_CPP = """#include "kernels/cpu_kernel.hpp"
#include "kernels/scale/scale.hpp"
#include "ktune/source_hash/scale_cpu.hpp"

namespace ktune {
namespace {

class ScaleCpu final : public CpuKernel {
 public:
  std::string source_hash() const override { return source_hash::scale_cpu; }
  std::function<void()> prepare(const CpuLaunchContext& context) const override {
    const std::int64_t n = context.problem.dim("n");
    const std::int64_t step = context.config.get_int("step");
    const auto* x = static_cast<const float*>(context.tensor("x").data);
    auto* out = static_cast<float*>(context.tensor("out").data);
    return [=] {
      for (std::int64_t begin = 0; begin < n; begin += step)
        for (std::int64_t i = begin; i < n && i < begin + step; ++i) out[i] = static_cast<float>(kScaleFactor) * x[i];
    };
  }
};

}  // namespace

const CpuKernel& scale_cpu_kernel() {
  static const ScaleCpu kernel;
  return kernel;
}

}  // namespace ktune
"""

SPACE_JSON = """{
  "family": "scale",
  "backend": "cpu",
  "description": "Scale on the CPU: elements per inner loop.",
  "parameters": [{"name": "step", "values": [1, 16, 256, 4096], "help": "elements per inner loop"}],
  "default": {"step": 16}
}
"""

FAST = ["--max-seconds-per-config", "0.02", "--min-samples", "3"]


def source_files(root):
    """The files of the source tree as git knows them (tracked, or new and not ignored)."""
    listed = subprocess.run(["git", "-C", root, "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
                            capture_output=True, text=True)
    if listed.returncode == 0 and listed.stdout:
        return [path for path in listed.stdout.split("\0") if path and os.path.isfile(os.path.join(root, path))]
    files = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d not in (".git", "build")]
        files += [os.path.relpath(os.path.join(folder, name), root) for name in names]
    return files


class NewFamily(harness.KtuneTestCase):
    def setUp(self):
        super().setUp()
        self.tree = os.path.join(self.dir, "tree")
        for path in source_files(harness.ARGS.source_dir):
            target = os.path.join(self.tree, path)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copy2(os.path.join(harness.ARGS.source_dir, path), target)
        self.build_dir = os.path.join(self.dir, "build")
        self.binary = os.path.join(self.build_dir, "ktune")

    def write(self, path, text, append=False):
        with open(os.path.join(self.tree, path), "a" if append else "w") as f:
            f.write(text)

    def build(self):
        result = subprocess.run(["cmake", "--build", self.build_dir, "--target", "ktune", "-j", str(os.cpu_count() or 2)],
                                capture_output=True, text=True, timeout=1500)
        self.assertEqual(result.returncode, 0, result.stdout[-4000:] + result.stderr[-4000:])
        return result.stdout

    def run_ktune(self, *args):
        result = subprocess.run([self.binary, *args, "--json"], cwd=self.dir, capture_output=True, text=True,
                                timeout=300)
        self.assertEqual(result.returncode, 0, f"ktune {' '.join(args)}: {result.stdout}\n{result.stderr}")
        return json.loads(result.stdout)

    def tune(self):
        return harness.only_result(self, self.run_ktune(
            "tune", "--kernel", "scale", "--backend", "cpu", "--shape", "n=10001", "--budget", "4",
            "--db", self.db, "--export-dir", os.path.join(self.dir, "tuned"), *FAST))

    def scale_hashes(self):
        return [row[0] for row in self.query("SELECT source_hash FROM kernels WHERE family = 'scale' ORDER BY id")]

    def test_a_family_added_through_its_declaration_builds_tunes_and_exports(self):
        # The family: its folder, its search space, and one line in the list of families.
        os.makedirs(os.path.join(self.tree, "kernels", "scale"))
        self.write("kernels/scale/family.json", FAMILY_JSON)
        self.write("kernels/scale/scale.hpp", SCALE_HPP)
        self.write("kernels/scale/family.cpp", FAMILY_CPP)
        self.write("kernels/scale/cpu.cpp", CPU_CPP)
        self.write("search_spaces/scale.cpu.json", SPACE_JSON)
        lists = os.path.join(self.tree, "kernels", "CMakeLists.txt")
        with open(lists) as f:
            text = f.read()
        self.assertIn("  flash_attention\n", text)
        with open(lists, "w") as f:
            f.write(text.replace("  flash_attention\n", "  flash_attention\n  scale\n", 1))

        configure = ["cmake", "-S", self.tree, "-B", self.build_dir, "-DCMAKE_BUILD_TYPE=None",
                     "-DCMAKE_CXX_FLAGS=-O0", "-DKTUNE_CPU_KERNEL_FLAGS=-O1", f"-DCMAKE_CXX_COMPILER={harness.ARGS.cxx}",
                     "-DKTUNE_WITH_CUDA=OFF", "-DKTUNE_WITH_HIP=OFF", "-DKTUNE_WITH_VULKAN=OFF", "-DKTUNE_WITH_MPI=OFF",
                     "-DKTUNE_BUILD_TESTS=OFF", "-DKTUNE_ONLY_FAMILIES=scale;rmsnorm;copy"]
        if shutil.which("ninja"):
            configure += ["-G", "Ninja"]
        if shutil.which("ccache"):
            configure += ["-DCMAKE_CXX_COMPILER_LAUNCHER=ccache"]
        result = subprocess.run(configure, capture_output=True, text=True, timeout=300)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.build()

        listed = {entry["kernel"]: entry for entry in self.run_ktune("list")["kernels"]}
        self.assertIn("scale", listed)
        self.assertEqual([b["backend"] for b in listed["scale"]["backends"]], ["cpu"])

        summary = self.tune()
        self.assertEqual(summary["outcomes"], {"ok": 4})
        self.assertEqual(summary["evaluated"], 4)
        self.assertLess(summary["best"]["error"], 1e-6)
        header = os.path.join(self.dir, "tuned", "cpu", "scale.hpp")
        self.assertTrue(os.path.isfile(header), os.listdir(os.path.join(self.dir, "tuned")))
        with open(header) as f:
            self.assertIn("step", f.read())
        [first_hash] = self.scale_hashes()

        # A header of another family changes: scale's results stay in use.
        self.write("kernels/rmsnorm/rmsnorm.hpp", "// edited\n", append=True)
        self.build()
        again = self.tune()
        self.assertEqual((again["evaluated"], again["reused"]), (0, 4))
        self.assertEqual(self.scale_hashes(), [first_hash])

        # A header scale's kernel includes changes (its constant, or only a comment): a new source
        # hash, so it is measured afresh.
        self.write("kernels/scale/scale.hpp", "// edited\n", append=True)
        self.build()
        fresh = self.tune()
        self.assertEqual((fresh["evaluated"], fresh["reused"]), (4, 0))
        hashes = self.scale_hashes()
        self.assertEqual(len(hashes), 2)
        self.assertNotEqual(hashes[0], hashes[1])


if __name__ == "__main__":
    harness.main()
