"""ci/gpu-check scaling: `ktune tune --devices` on 1, 2, 4 ... GPUs of this host. First
tests/integration/test_devices_gpu.py (label gpu). Then the GEMM space (search_spaces/
gemm.cuda.json, every path) at KTUNE_SCALING_SHAPE (default m=4096,n=4096,k=4096) in bf16: one
tune on every GPU fills the cubin cache, then the same KTUNE_SCALING_BUDGET configs (default 600
of the 770 valid at 4096^3; random order, seed 11, so every run measures the same configs) are
tuned on 1, 2, 4 ... GPUs, each into a fresh database. Writes scaling.log, scaling-table.md (evaluations
per second, speed-up over one GPU, and the time each run took to reach a config within 2% of the
best of its configs) and scaling-errors.log to the output."""
import glob
import os
import subprocess
import sys

from . import ktune, table_scaling
from .context import Log, make_table
from .phase_gemm import write_errors


def gpu_count():
    try:
        listing = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True).stdout
    except OSError:
        return 0
    return len(listing.splitlines())


def device_counts(gpus):
    """1, 2, 4 ... up to the host's GPUs."""
    counts, n = [], 1
    while n <= gpus:
        counts.append(n)
        n *= 2
    return counts


def run(context):
    log = Log(context.out("scaling.log"), truncate=True)
    gpus = gpu_count()
    log(f"== scaling: {gpus} GPUs")
    test = subprocess.run([sys.executable, os.path.join(context.root, "tests", "integration", "test_devices_gpu.py"),
                           "--ktune", context.ktune, "--source-dir", context.root],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    log(*test.stdout.splitlines()[-8:])
    if test.returncode != 0:
        context.fail()
    shape = context.environ.get("KTUNE_SCALING_SHAPE", "m=4096,n=4096,k=4096")
    budget = context.environ.get("KTUNE_SCALING_BUDGET", "600")

    def tune(devices, label):
        rc = ktune.run(context.ktune, ktune.tune_args(
            "gemm", "cuda", shape, "bf16", "--strategy", "random", "--seed", "11", "--budget", budget,
            "--config-timeout", "30", "--devices", devices, "--db", context.path(f"scaling-{label}.db"),
            "--no-export", "--json"), stdout=context.path(f"scaling-{label}.json"), stderr=context.path("scaling.err"))
        log(f"tune on devices {devices}: exit {rc}")

    for path in glob.glob(context.path("scaling-*.db")):
        os.remove(path)
    tune("all", "warm")
    runs = []
    for n in device_counts(gpus):
        tune(",".join(str(i) for i in range(n)), f"gpus{n}")
        runs.append(f"scaling-gpus{n}.json")
    text = make_table(table_scaling.main, context.work, *runs)
    with open(context.out("scaling-table.md"), "w") as f:
        f.write(text)
    log(text.rstrip("\n"))
    if text.startswith("no table"):
        context.fail()
    write_errors(context, ["scaling.err"], "scaling-errors.log")


def plan(context):
    print("== scaling plan: test_devices_gpu.py, then a warm-up tune on every GPU and the same "
          f"{context.environ.get('KTUNE_SCALING_BUDGET', '600')} configs at "
          f"{context.environ.get('KTUNE_SCALING_SHAPE', 'm=4096,n=4096,k=4096')} bf16 on 1, 2, 4 ... GPUs")
