"""ci/gpu-check linear_residual [SECONDS]: a transformer's output projection with its residual,
y = x·Wᵀ + b + r, as ktune's GEMM with epilogue 5 (alpha = beta = 1 in the kernel's terms), tuned
on CUDA (at most SECONDS of evaluation per shape, default 20) at tokens x hidden KTUNE_LR_SHAPES
(default: tokens 1, 256, 4096 and 16384 at hidden 4096 and 8192) in KTUNE_LR_PRECISION (default
bf16), against PyTorch's eager route and torch.compile, in the same call on the same card
(ci/gpu/baseline_linear_residual.py). Writes linear_residual.json and linear_residual-table.md."""
import json

from . import ktune
from .context import python_module

SHAPES = "1x4096 256x4096 4096x4096 16384x4096 1x8192 256x8192 4096x8192 16384x8192"


def settings(context):
    shapes = context.environ.get("KTUNE_LR_SHAPES", SHAPES).split()
    return shapes, context.environ.get("KTUNE_LR_PRECISION", "bf16"), context.seconds(20)


def plan(context):
    shapes, precision, seconds = settings(context)
    print(f"linear_residual: gemm epilogue=5 tuned at {' '.join(shapes)} in {precision}, {seconds:g} s each; "
          "PyTorch eager and torch.compile")


def table(rows, precision, device):
    def number(value, fmt):
        return format(value, fmt) if isinstance(value, (int, float)) else "-"

    def ratio(a, b):
        return a / b if isinstance(a, (int, float)) and isinstance(b, (int, float)) and b else None
    lines = [f"y = x·Wᵀ + b + r on {device}, {precision} (median, warm L2, as ktune times a GEMM)", "",
             "| tokens x hidden | configs | ktune us | eager us | torch.compile us | best PyTorch / ktune | "
             "GEMM alone (cuBLASLt) us | best config |",
             "|---|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        b = r.get("baseline", {})
        best = min([v for v in (b.get("eager_ns"), b.get("compiled_ns")) if isinstance(v, (int, float))], default=None)
        k = r.get("ktune_ns")
        lines.append(f"| {r['shape']} | {r.get('configs', '-')} | {number(k and k / 1e3, '.1f')} | "
                     f"{number(b.get('eager_ns') and b['eager_ns'] / 1e3, '.1f')} | "
                     f"{number(b.get('compiled_ns') and b['compiled_ns'] / 1e3, '.1f')} | "
                     f"{number(ratio(best, k), '.2f')} | {number(b.get('gemm_only_ns') and b['gemm_only_ns'] / 1e3, '.1f')} | "
                     f"{r.get('config', '-')} |")
    return "\n".join(lines) + "\n"


def run(context):
    shapes, precision, seconds = settings(context)
    print(f"== linear_residual: {len(shapes)} shapes, {precision}, {seconds:g} s each", flush=True)
    baseline_path = context.path("linear_residual-baselines.json")
    with open(baseline_path, "w") as out, open(context.path("linear_residual-baselines.err"), "w") as err:
        rc = python_module("baseline_linear_residual", precision, *shapes, stdout=out, stderr=err,
                           timeout=400).returncode
    baselines = ktune.load_json(baseline_path) or {}
    if rc != 0:
        print(f"baselines: exit {rc}; see linear_residual-baselines.err", flush=True)
        context.fail()
    rows = []
    for text in shapes:
        tokens, hidden = text.split("x")
        result_path = context.path(f"linear_residual-{text}.json")
        shape = f"m={tokens},n={hidden},k={hidden},epilogue=5"
        rc = ktune.run(context.ktune, ktune.tune_args("gemm", "cuda", shape, precision, "--time-limit", str(seconds),
                                                      "--db", context.path("lr.db"), "--no-export", "--json"),
                       stdout=result_path, stderr=context.path("linear_residual.err"), timeout=int(seconds) + 300,
                       interrupt=True)
        summary = ktune.tune_result(ktune.load_json(result_path)) or {}
        best = summary.get("best") or {}
        rows.append({"shape": text, "exit": rc, "configs": summary.get("evaluated", 0) + summary.get("reused", 0),
                     "outcomes": summary.get("outcomes"), "ktune_ns": best.get("median_ns"),
                     "config": json.dumps(best.get("config"), separators=(",", ":")) if best else None,
                     "device_use": summary.get("device_use"),
                     "baseline": (baselines.get("results") or {}).get(text, {})})
        print(f"{text}: exit {rc}, {rows[-1]['configs']} configs, best {rows[-1]['ktune_ns']} ns, "
              f"outcomes {rows[-1]['outcomes']}", flush=True)
        if rc != 0 or not best:
            context.fail()
    device = baselines.get("device", "?")
    with open(context.out("linear_residual.json"), "w") as f:
        json.dump({"device": device, "torch": baselines.get("torch"), "precision": precision, "seconds": seconds,
                   "rows": rows}, f, indent=1)
    text = table(rows, precision, device)
    with open(context.out("linear_residual-table.md"), "w") as f:
        f.write(text)
    print(text, flush=True)
