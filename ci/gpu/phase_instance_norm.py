"""ci/gpu-check instance_norm [SECONDS]: ktune's instance_norm family tuned on CUDA (at most SECONDS
of evaluation per shape, default 20) at image shapes KTUNE_IN_SHAPES (default below:
style-transfer feature maps from 64 planes of 256^2 to 3 planes of 1024^2) in KTUNE_IN_PRECISION
(default bf16), against PyTorch's F.instance_norm (eager and torch.compile) and a copy of the same
bytes, in the same call on the same card (ci/gpu/baseline_instance_norm.py).

Writes instance_norm.json (every figure) and instance_norm-table.md to the output."""
import json
import os

from . import ktune
from .context import python_module

SHAPES = "1x64x256x256 4x64x256x256 8x128x128x128 1x32x512x512 16x256x64x64 1x3x1024x1024"


def settings(context):
    shapes = context.environ.get("KTUNE_IN_SHAPES", SHAPES).split()
    precision = context.environ.get("KTUNE_IN_PRECISION", "bf16")
    return shapes, precision, context.seconds(20)


def plan(context):
    shapes, precision, seconds = settings(context)
    print(f"instance_norm: tune {' '.join(shapes)} in {precision}, {seconds:g} s each; PyTorch baselines")


def shape_arg(text):
    batch, channels, height, width = text.split("x")
    return f"batch={batch},channels={channels},height={height},width={width}"


def table(rows, precision, device):
    lines = [f"instance_norm on {device}, {precision}: median of flushed samples; bandwidth counts x, out, "
             "gamma, beta once each", "",
             "| shape (NxCxHxW) | configs | ktune us | ktune TB/s | copy TB/s | ktune / copy | PyTorch eager us | "
             "torch.compile us | eager / ktune | compile / ktune | best config |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        def cell(value, fmt):
            return format(value, fmt) if isinstance(value, (int, float)) else "-"
        k, b = r.get("ktune_ns"), r.get("baseline", {})
        tb = lambda ns: r["bytes"] / ns / 1e3 if isinstance(ns, (int, float)) and ns else None
        ratio = lambda a, c: a / c if isinstance(a, (int, float)) and isinstance(c, (int, float)) and c else None
        lines.append(f"| {r['shape']} | {r.get('configs', '-')} | {cell(k and k / 1e3, '.1f')} | "
                     f"{cell(tb(k), '.2f')} | {cell(tb(b.get('copy_ns')), '.2f')} | "
                     f"{cell(ratio(b.get('copy_ns'), k), '.2f')} | {cell(b.get('eager_ns', 0) / 1e3 or None, '.1f')} | "
                     f"{cell(b.get('compiled_ns', 0) / 1e3 or None, '.1f')} | {cell(ratio(b.get('eager_ns'), k), '.2f')} | "
                     f"{cell(ratio(b.get('compiled_ns'), k), '.2f')} | {r.get('config', '-')} |")
    return "\n".join(lines) + "\n"


def run(context):
    shapes, precision, seconds = settings(context)
    print(f"== instance_norm: {len(shapes)} shapes, {precision}, {seconds:g} s each", flush=True)
    baseline_path = context.path("instance_norm-baselines.json")
    with open(baseline_path, "w") as out, open(context.path("instance_norm-baselines.err"), "w") as err:
        rc = python_module("baseline_instance_norm", precision, *shapes, stdout=out, stderr=err, timeout=400).returncode
    baselines = ktune.load_json(baseline_path) or {}
    if rc != 0:
        print(f"baselines: exit {rc}; see instance_norm-baselines.err", flush=True)
        context.fail()
    rows = []
    for text in shapes:
        result_path = context.path(f"instance_norm-{text}.json")
        rc = ktune.run(context.ktune, ktune.tune_args("instance_norm", "cuda", shape_arg(text), precision,
                                                      "--time-limit", str(seconds), "--db", context.path("in.db"),
                                                      "--no-export", "--json"),
                       stdout=result_path, stderr=context.path("instance_norm.err"), timeout=int(seconds) + 300,
                       interrupt=True)
        summary = ktune.tune_result(ktune.load_json(result_path)) or {}
        best = summary.get("best") or {}
        row = {"shape": text, "exit": rc, "configs": summary.get("evaluated", 0) + summary.get("reused", 0),
               "outcomes": summary.get("outcomes"), "ktune_ns": best.get("median_ns"),
               "config": json.dumps(best.get("config"), separators=(",", ":")) if best else None,
               "default_ns": (summary.get("default") or {}).get("median_ns"),
               "device_use": summary.get("device_use"),
               "baseline": (baselines.get("results") or {}).get(text, {})}
        row["bytes"] = row["baseline"].get("bytes") or summary.get("bytes") or 0
        rows.append(row)
        print(f"{text}: exit {rc}, {row['configs']} configs, best {row['ktune_ns']} ns, outcomes {row['outcomes']}",
              flush=True)
        if rc != 0 or not best:
            context.fail()
    device = baselines.get("device", "?")
    with open(context.out("instance_norm.json"), "w") as f:
        json.dump({"device": device, "torch": baselines.get("torch"), "precision": precision, "seconds": seconds,
                   "rows": rows}, f, indent=1)
    text = table(rows, precision, device)
    with open(context.out("instance_norm-table.md"), "w") as f:
        f.write(text)
    print(text, flush=True)
