"""ci/gpu-check torch: the Python package (python/ktune) on the GPU, with the machine's PyTorch and
the kernel library at $KTUNE_LIBRARY (default build/library-gpu/library/libktune_kernels.so: the
library built here with CUDA, `cmake -S . -B build/library-gpu -DKTUNE_BUILD_TOOL=OFF
-DKTUNE_WITH_CUDA=ON -DKTUNE_LIBRARY_CUDA_ARCHS=sm_90a`, carried). First
tests/python/test_torch_package_gpu.py (every op at odd shapes in three precisions, CUDA graphs,
a side stream, torch.compile, modules swapped in bf16), then ci/gpu/bench_torch_modules.py
(each module and two decoder blocks against PyTorch eager, in a CUDA graph and torch.compile;
KTUNE_TORCH_QUICK=1 for smaller shapes), and with KTUNE_TORCH_PROFILE=1 the decoder blocks'
kernels (ci/gpu/profile_decoder_blocks.py). Writes torch-test.log, torch.json, torch-table.md and
decoder-profile.md. KTUNE_DB names a database whose configs the calls run (compiled on first use):
a torch_tune step's torch-tune.db in the same call; with it, KTUNE_TORCH_REFINE=N makes each
decoder block's GEMM and attention calls run whichever of the database's N fastest configs makes
the whole block fastest (ktune.refine), in the benchmark and the profile alike."""
import json
import os
import subprocess
import sys

from .against_pytorch import cell, ratio, us


def library(context):
    return context.environ.get("KTUNE_LIBRARY") or os.path.join(context.root, "build", "library-gpu", "library",
                                                                "libktune_kernels.so")


def environment(context):
    """The environment the package's scripts run in: the library and the package from this checkout."""
    return {**os.environ, "KTUNE_LIBRARY": library(context), "PYTHONPATH": os.path.join(context.root, "python"),
            "KTUNE_BIN": context.environ.get("KTUNE_BIN") or context.ktune}


def table(document, what):
    lines = [f"{what} on {document['device']} (torch {document['torch']}), bf16, median us", "",
             "| case | eager | eager, CUDA graph | torch.compile | ktune | ktune, CUDA graph | best PyTorch / ktune "
             "(graph vs graph) | relative L2 |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for name, r in document["results"].items():
        best = min([r[k] for k in ("eager_ns", "eager_graph_ns", "compiled_ns") if k in r], default=None)
        ours = min([r[k] for k in ("ktune_ns", "ktune_graph_ns") if k in r], default=None)
        if r.get("refined"):
            name += f" (refined in place: {len(r['refined'])} calls)"
        lines.append(f"| {name} | {cell(us(r.get('eager_ns')), '.1f')} | {cell(us(r.get('eager_graph_ns')), '.1f')} | "
                     f"{cell(us(r.get('compiled_ns')), '.1f')} | {cell(us(r.get('ktune_ns')), '.1f')} | "
                     f"{cell(us(r.get('ktune_graph_ns')), '.1f')} | "
                     f"{cell(ratio(best, ours), '.2f')} | "
                     f"{cell(r.get('relative_l2'), '.2g')} |")
    return "\n".join(lines) + "\n"


def run(context):
    lib = library(context)
    env = environment(context)
    print(f"== torch: tests/python/test_torch_package_gpu.py with {lib}", flush=True)
    test = subprocess.run([sys.executable, os.path.join(context.root, "tests", "python", "test_torch_package_gpu.py"),
                           "--library", lib, "--source-dir", context.root],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    with open(context.out("torch-test.log"), "w") as f:
        f.write(test.stdout)
    print("\n".join(test.stdout.splitlines()[-30:]), flush=True)
    if test.returncode != 0:
        context.fail()
    if context.environ.get("KTUNE_TORCH_BENCH", "1") != "1":
        return
    print("== torch: modules and decoder blocks against PyTorch", flush=True)
    args = ["--quick"] if context.environ.get("KTUNE_TORCH_QUICK") == "1" else []
    bench(context, "bench_torch_modules", "torch", "ktune's modules against PyTorch", args)
    if context.environ.get("KTUNE_TORCH_PROFILE") == "1":
        print("== torch: the decoder blocks' kernels (torch.profiler)", flush=True)
        result = subprocess.run([sys.executable, "-m", "ci.gpu.profile_decoder_blocks", *args], stdout=subprocess.PIPE,
                                text=True, env=environment(context), cwd=context.root)
        with open(context.out("decoder-profile.md"), "w") as f:
            f.write(result.stdout)
        print(result.stdout, flush=True)
        if result.returncode != 0:
            print(f"profile_decoder_blocks exited {result.returncode}", flush=True)
            context.fail()


def bench(context, module, name, what, args=()):
    """Runs ci/gpu/<module>.py (one JSON document of routes per case on stdout) with the package's
    environment; writes <name>.json and <name>-table.md."""
    result = subprocess.run([sys.executable, "-m", f"ci.gpu.{module}", *args], stdout=subprocess.PIPE, text=True,
                            env=environment(context), cwd=context.root)
    if result.returncode != 0:
        print(f"{module} exited {result.returncode}", flush=True)
        context.fail()
        return
    document = json.loads(result.stdout)
    with open(context.out(f"{name}.json"), "w") as f:
        json.dump(document, f, indent=1)
    text = table(document, what)
    with open(context.out(f"{name}-table.md"), "w") as f:
        f.write(text)
    print(text, flush=True)


def plan(context):
    print(f"== torch plan: tests/python/test_torch_package_gpu.py and ci/gpu/bench_torch_modules.py with "
          f"{library(context)}")
