"""ci/gpu-check ffn [SECONDS]: the MLP block y = act(x·W1ᵀ + b1)·W2ᵀ + b2, both GEMMs in one
launch. First the checks: every wgmma variant brute-forced on odd shapes in bf16 (and fp16 at one
shape), every mma.sync variant on an odd shape in bf16 (KTUNE_FFN_MMA_CHECK=0 skips these), then
sampled variants of every path at the family's odd shapes (family.json) in fp32, fp16 and bf16
(KTUNE_FFN_CHECK=0 skips all checks; KTUNE_FFN_BENCH=0 skips what follows). Then the family tuned on
CUDA (at most SECONDS of evaluation per shape, default 20, GELU) at tokens x hidden x ffn
KTUNE_FFN_SHAPES (default: tokens 256, 4096 at hidden 4096, ffn 4x and 14336) in
KTUNE_FFN_PRECISION (default bf16), against PyTorch's eager route (also in a CUDA graph) and
torch.compile, in the same call on the same card (ci/gpu/baseline_ffn.py). Writes ffn.log,
ffn.json and ffn-table.md."""
import functools
import os

from . import against_pytorch, judge, narrow
from .context import Log
from .families import shape_text

SHAPES = "256x4096x16384 4096x4096x16384 256x4096x14336 4096x4096x14336"
# Odd shapes for the brute force: rows that end mid-tile, k and f not multiples of a slice, and
# one with more tiles than SMs (tiles of y whose rows of H are still being written).
WGMMA_SHAPES = ["m=200,k=136,f=264", "m=1500,k=136,f=1000"]
MMA_SHAPES = ["m=200,k=136,f=264"]


def settings(context):
    return against_pytorch.settings(context, "FFN", SHAPES)


def plan(context):
    shapes, precision, seconds = settings(context)
    if context.environ.get("KTUNE_FFN_CHECK", "1") == "1":
        print(f"ffn checks: wgmma brute force at {' '.join(WGMMA_SHAPES)}, mma at {' '.join(MMA_SHAPES)}, "
              "sampled variants at the odd shapes")
    print(f"ffn: tuned at {' '.join(shapes)} in {precision}, {seconds:g} s each; PyTorch eager and torch.compile")


def shape_arg(text):
    tokens, hidden, ffn = text.split("x")
    return f"m={tokens},k={hidden},f={ffn}"


def table(rows, precision, device):
    return against_pytorch.gemm_table(
        rows, f"y = GELU(x·W1ᵀ + b1)·W2ᵀ + b2 on {device}, {precision} (median, warm L2, as ktune times a GEMM)",
        "tokens x hidden x ffn", "both GEMMs alone (cuBLASLt, graphed)")


def run(context):
    shapes, precision, seconds = settings(context)
    log = Log(context.out("ffn.log"), truncate=True)
    # check(label, space, shape, precision, *strategy)
    check = functools.partial(against_pytorch.check_tune, context, log, "ffn")
    if context.environ.get("KTUNE_FFN_CHECK", "1") == "1":
        space = narrow.load(os.path.join(context.root, "search_spaces", "ffn.cuda.json"))
        paths = {path: narrow.write(narrow.gemm_path_space(space, path), os.path.join(context.work, f"ffn-{path}.cuda.json"))
                 for path in ("wgmma", "mma")}
        log("== ffn: every wgmma variant on odd shapes")
        for precision_checked, shapes_checked in (("bf16", WGMMA_SHAPES), ("fp16", WGMMA_SHAPES[:1])):
            for shape in shapes_checked:
                check("wgmma", paths["wgmma"], shape, precision_checked, "--strategy", "brute_force")
        if context.environ.get("KTUNE_FFN_MMA_CHECK", "1") == "1":
            log("== ffn: every mma.sync variant on an odd shape")
            for shape in MMA_SHAPES:
                check("mma", paths["mma"], shape, "bf16", "--strategy", "brute_force")
        log("== ffn: sampled variants (both paths) at the odd shapes")
        for precision_checked in ("fp32", "fp16", "bf16"):
            for shape in context.family("ffn").odd_shapes:
                check("sampled", None, shape_text(shape), precision_checked, "--strategy", "random",
                      "--budget", "16")
        log(*judge.not_ok(context.path("ffn-check.db"), limit=40))
    if context.environ.get("KTUNE_FFN_BENCH", "1") != "1":
        return
    log(against_pytorch.run(context, "ffn", "baseline_ffn", shapes, precision, seconds, "ffn", shape_arg, table))
