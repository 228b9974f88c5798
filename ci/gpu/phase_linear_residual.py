"""ci/gpu-check linear_residual [SECONDS]: a transformer's output projection with its residual,
y = x·Wᵀ + b + r, as ktune's GEMM with epilogue 5 (alpha = beta = 1 in the kernel's terms), tuned
on CUDA (at most SECONDS of evaluation per shape, default 20) at tokens x hidden KTUNE_LR_SHAPES
(default: tokens 1, 256, 4096 and 16384 at hidden 4096 and 8192) in KTUNE_LR_PRECISION (default
bf16), against PyTorch's eager route (also captured in a CUDA graph) and torch.compile, in the
same call on the same card (ci/gpu/baseline_linear_residual.py). Writes linear_residual.json and linear_residual-table.md."""
from . import against_pytorch

SHAPES = "1x4096 256x4096 4096x4096 16384x4096 1x8192 256x8192 4096x8192 16384x8192"


def settings(context):
    return against_pytorch.settings(context, "LR", SHAPES)


def plan(context):
    shapes, precision, seconds = settings(context)
    print(f"linear_residual: gemm epilogue=5 tuned at {' '.join(shapes)} in {precision}, {seconds:g} s each; "
          "PyTorch eager and torch.compile")


def shape_arg(text):
    tokens, hidden = text.split("x")
    return f"m={tokens},n={hidden},k={hidden},epilogue=5"


def table(rows, precision, device):
    return against_pytorch.gemm_table(
        rows, f"y = x·Wᵀ + b + r on {device}, {precision} (median, warm L2, as ktune times a GEMM)",
        "tokens x hidden", "GEMM alone (cuBLASLt, graphed)")


def run(context):
    shapes, precision, seconds = settings(context)
    against_pytorch.run(context, "linear_residual", "baseline_linear_residual", shapes, precision, seconds, "gemm",
                        shape_arg, table)
