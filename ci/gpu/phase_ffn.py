"""ci/gpu-check ffn [SECONDS]: the MLP block y = act(x·W1ᵀ + b1)·W2ᵀ + b2, both GEMMs in one
launch. First the checks: every mma.sync variant brute-forced on an odd shape in bf16, then
sampled variants of both paths at the family's odd shapes (family.json) in fp32, fp16 and bf16
(KTUNE_FFN_CHECK=0 skips them; KTUNE_FFN_BENCH=0 skips what follows). Then the family tuned on
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
MMA_SHAPES = ["m=200,k=136,f=264"]


def settings(context):
    return against_pytorch.settings(context, "FFN", SHAPES)


def plan(context):
    shapes, precision, seconds = settings(context)
    if context.environ.get("KTUNE_FFN_CHECK", "1") == "1":
        print(f"ffn checks: mma brute force at {' '.join(MMA_SHAPES)}, sampled variants at the odd shapes")
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
        mma = narrow.write(narrow.narrow(space, {"path": ["mma"]}), os.path.join(context.work, "ffn-mma.cuda.json"))
        log("== ffn: every mma.sync variant on an odd shape")
        for shape in MMA_SHAPES:
            check("mma", mma, shape, "bf16", "--strategy", "brute_force")
        log("== ffn: sampled variants (both paths) at the odd shapes")
        for precision_checked in ("fp32", "fp16", "bf16"):
            for shape in context.family("ffn").odd_shapes:
                check("sampled", None, shape_text(shape), precision_checked, "--strategy", "random",
                      "--budget", "16")
        log(*judge.not_ok(context.path("ffn-check.db"), limit=40))
    if context.environ.get("KTUNE_FFN_BENCH", "1") != "1":
        return
    log(against_pytorch.run(context, "ffn", "baseline_ffn", shapes, precision, seconds, "ffn", shape_arg, table))
