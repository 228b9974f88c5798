"""ci/gpu-check spaces: brute-force the whole space of each family in KTUNE_SPACE_KERNELS (default
softmax_dropout softmax rmsnorm layernorm swiglu) at KTUNE_SPACE_SHAPE (default the family's bench
shape, family.json) in bf16, recorded as Kernel Tuner caches and T4 results in spaces/ of the
output: held-out spaces for `ktune replay` (reports/search.md). An item may be
kernel@shape@precision (e.g. gemm@m=4096,n=4096,k=4096@fp16); KTUNE_SPACE_DEVICES=all measures on
every GPU of the host at once."""
import time

from . import ktune
from .families import shape_text

DEFAULT_KERNELS = "softmax_dropout softmax rmsnorm layernorm swiglu"


def items(context):
    """(kernel, shape, precision) of every space to measure."""
    chosen = []
    for item in context.environ.get("KTUNE_SPACE_KERNELS", DEFAULT_KERNELS).split():
        kernel, shape, precision = (item.split("@") + ["", ""])[:3]
        shape = shape or context.environ.get("KTUNE_SPACE_SHAPE") or shape_text(context.family(kernel).bench_shape)
        chosen.append((kernel, shape, precision or "bf16"))
    return chosen


def run(context):
    print("== spaces: brute force, recorded for replay", flush=True)
    for kernel, shape, precision in items(context):
        label = f"{kernel}-{shape.replace('=', '_').replace(',', '_')}-{precision}"
        start = time.time()
        result = context.path(f"space-{label}.json")
        rc = ktune.run(context.ktune, ktune.tune_args(
            kernel, "cuda", shape, precision, "--strategy", "brute_force", "--budget", "10000000",
            "--max-seconds-per-config", "0.02", "--config-timeout", "10",
            "--devices", context.environ.get("KTUNE_SPACE_DEVICES", "0"), "--db", context.path("spaces.db"),
            "--no-export", "--record", context.out("spaces"), "--json"),
            stdout=result, stderr=context.path("space.err"))
        summary = ktune.tune_result(ktune.load_json(result))
        what = f"{summary['space']['valid']} configs, {summary['outcomes']}" if summary else "no JSON"
        print(f"{kernel} {shape} {precision}: exit {rc}, {int(time.time() - start)} s, {what}", flush=True)


def plan(context):
    print("== spaces plan")
    for kernel, shape, precision in items(context):
        print(f"{kernel} {shape} {precision}")
