"""ci/gpu-check torch_tune [SECONDS]: tunes, on this card, every library call ktune's PyTorch
modules and decoder block make in `ci/gpu-check torch` (ci/gpu/tune_torch_modules.py: at most
SECONDS each, default 20, a GEMM or attention call KTUNE_TORCH_TUNE_COMPUTE_FACTOR times that,
default 2; KTUNE_TORCH_QUICK=1 for the smaller shapes) and exports the tables.
Writes torch-tune.json (the calls, the failures) and tuned-cuda.tgz (the exported tables as
tuned/cuda/: unpack it in the repository, rebuild with `KTUNE_TUNED_DIR=$PWD/tuned
ci/build-gpu-bundle`, then run the torch phase to measure the library with this card's configs)
to the output."""
import json
import os
import subprocess
import sys
import tarfile

from .phase_torch import environment, library


def run(context):
    seconds = context.seconds(20)
    out_dir = context.path("tuned")
    env = environment(context)  # `python -m` from the root finds ci.gpu
    args = [sys.executable, "-m", "ci.gpu.tune_torch_modules", f"{seconds:g}", context.path("torch-tune.db"), out_dir]
    if context.environ.get("KTUNE_TORCH_QUICK") == "1":
        args.append("--quick")
    print(f"== torch_tune: the modules' calls, at most {seconds:g} s each", flush=True)
    result = subprocess.run(args, stdout=subprocess.PIPE, text=True, env=env, cwd=context.root)
    with open(context.out("torch-tune.json"), "w") as f:
        f.write(result.stdout)
    try:
        summary = json.loads(result.stdout)
        print(f"{len(summary['calls'])} calls tuned, {len(summary['failed'])} failed, export exit "
              f"{summary['export_exit']}", flush=True)
    except (ValueError, KeyError):
        print(f"tune_torch_modules exited {result.returncode} without its summary", flush=True)
    if os.path.isdir(out_dir):
        with tarfile.open(context.out("tuned-cuda.tgz"), "w:gz") as archive:
            archive.add(out_dir, arcname="tuned")
    if result.returncode != 0:
        context.fail()


def plan(context):
    print("== torch_tune plan")
    print(f"record the calls of ci/gpu/bench_torch_modules.py's modules and decoder block, tune each for at most "
          f"{context.seconds(20):g} s (compute-bound calls {context.environ.get('KTUNE_TORCH_TUNE_COMPUTE_FACTOR', '2')} "
          f"times that), export tuned/cuda from {library(context)}'s calls")
