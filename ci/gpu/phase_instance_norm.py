"""ci/gpu-check instance_norm [SECONDS]: ktune's instance_norm family tuned on CUDA (at most SECONDS
of evaluation per shape, default 20) at image shapes KTUNE_IN_SHAPES (default below:
style-transfer feature maps from 64 planes of 256^2 to 3 planes of 1024^2) in KTUNE_IN_PRECISION
(default bf16), against PyTorch's F.instance_norm (eager, eager in a CUDA graph, torch.compile) and a copy of the same
bytes, in the same call on the same card (ci/gpu/baseline_instance_norm.py).

Writes instance_norm.json (every figure) and instance_norm-table.md to the output."""
from . import against_pytorch

SHAPES = "1x64x256x256 4x64x256x256 8x128x128x128 1x32x512x512 16x256x64x64 1x3x1024x1024"


def settings(context):
    return against_pytorch.settings(context, "IN", SHAPES)


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
             "eager in a CUDA graph us | torch.compile us | best PyTorch / ktune | best config |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    cell, us, ratio = against_pytorch.cell, against_pytorch.us, against_pytorch.ratio
    for r in rows:
        k, b = r.get("ktune_ns"), r.get("baseline", {})
        size = b.get("bytes", 0)  # as the baseline counts them: x and out once, gamma and beta

        def tb(ns):
            return ratio(size, ns * 1e3 if isinstance(ns, (int, float)) else None)
        lines.append(f"| {r['shape']} | {r.get('configs', '-')} | {cell(us(k), '.1f')} | "
                     f"{cell(tb(k), '.2f')} | {cell(tb(b.get('copy_ns')), '.2f')} | "
                     f"{cell(ratio(b.get('copy_ns'), k), '.2f')} | {cell(us(b.get('eager_ns')), '.1f')} | "
                     f"{cell(us(b.get('eager_graph_ns')), '.1f')} | {cell(us(b.get('compiled_ns')), '.1f')} | "
                     f"{cell(ratio(against_pytorch.best_pytorch(b), k), '.2f')} | {r.get('config', '-')} |")
    return "\n".join(lines) + "\n"


def run(context):
    shapes, precision, seconds = settings(context)
    against_pytorch.run(context, "instance_norm", "baseline_instance_norm", shapes, precision, seconds,
                        "instance_norm", shape_arg, table)
