"""ci/gpu-check bench [SECONDS]: each memory-bound CUDA family tuned at its bench shape
(family.json) in bf16 for SECONDS (default 60), and the PyTorch baselines at 16384 x 4096 bf16.
Writes bench-progress.log, table.md, tunes.json and baselines.json to the output."""
import glob
import json
import os
import shutil

from . import ktune, table_families
from .context import Log, python_module
from .families import shape_text

BASELINE_ROWS, BASELINE_COLS = 16384, 4096


def bench_shape(context, kernel):
    return shape_text(context.family(kernel).bench_shape)


def run(context):
    seconds = context.seconds(60)
    print(f"== tune 16384x4096 bf16 ({context.seconds_arg or 60} s per family)", flush=True)
    log = Log(context.out("bench-progress.log"))
    for kernel in context.kernels:
        rc = ktune.run(context.ktune, ktune.tune_args(
            kernel, "cuda", bench_shape(context, kernel), "bf16", "--time-limit", f"{seconds:g}",
            "--max-seconds-per-config", "0.1", "--config-timeout", "10", "--db", context.path("gpu.db"),
            "--export-dir", context.path("tuned"), "--json"),
            stdout=context.path(f"tune-{kernel}.json"), stderr=context.path(f"tune-{kernel}.err"))
        log(f"{kernel} exit {rc}")

    print("== PyTorch baselines, same shape", flush=True)
    with open(context.path("baselines.json"), "w") as out, open(context.path("baselines.err"), "w") as err:
        baselines = python_module("baseline_families", str(BASELINE_ROWS), str(BASELINE_COLS), stdout=out, stderr=err)
    if baselines.returncode != 0:
        with open(context.path("baselines.err")) as f:
            print("baselines failed: " + "".join(f.readlines()[-3:]), flush=True)

    text = table_families.bench_text(context.work)
    print(text, end="", flush=True)
    with open(context.path("table.md"), "w") as f:
        f.write(text)
    tunes = {os.path.basename(p): ktune.tune_result(ktune.load_json(p)) for p in sorted(glob.glob(context.path("tune-*.json")))}
    with open(context.out("tunes.json"), "w") as f:
        json.dump(tunes, f)
    for name in ("table.md", "baselines.json"):
        shutil.copy(context.path(name), context.out(name))


def plan(context):
    print(f"== bench plan: {context.seconds(60):g} s per family, bf16")
    for kernel in context.kernels:
        print(f"{kernel}: {bench_shape(context, kernel)}")
    print(f"PyTorch baselines at {BASELINE_ROWS}x{BASELINE_COLS}")
