"""ci/gpu-check layernorm_linear [SECONDS]: y = LayerNorm(x)·Wᵀ + b. First the checks: every wgmma
variant and every mma.sync variant brute-forced on odd shapes in bf16 (and fp16 at one shape for
wgmma), then sampled variants of every path at the family's odd shapes (family.json) in fp32,
fp16 and bf16 (KTUNE_LNL_CHECK=0 skips them; KTUNE_LNL_BENCH=0 skips what follows). Then the
family tuned on CUDA (at most SECONDS of evaluation per shape, default 20) at tokens x hidden KTUNE_LNL_SHAPES (default: tokens 1, 256, 4096 and 16384
at hidden 4096 and 8192; W is hidden x hidden) in KTUNE_LNL_PRECISION (default bf16), against
PyTorch's eager route (also captured in a CUDA graph) and torch.compile, in the same call on the
same card (ci/gpu/baseline_layernorm_linear.py). Writes layernorm_linear.log,
layernorm_linear.json and layernorm_linear-table.md."""
import functools
import os

from . import against_pytorch, judge, narrow
from .context import Log
from .families import shape_text

SHAPES = "1x4096 256x4096 4096x4096 16384x4096 1x8192 256x8192 4096x8192 16384x8192"
# Odd shapes for the brute force: rows that end mid-tile, k not a multiple of a slice, and one
# with more tiles than SMs at small block sizes (persistent variants, blocks that wait for row
# statistics other blocks take).
WGMMA_SHAPES = ["m=200,n=136,k=264", "m=1500,n=1000,k=72"]
MMA_SHAPES = ["m=200,n=136,k=264"]


def settings(context):
    return against_pytorch.settings(context, "LNL", SHAPES)


def plan(context):
    shapes, precision, seconds = settings(context)
    if context.environ.get("KTUNE_LNL_CHECK", "1") == "1":
        print(f"layernorm_linear checks: wgmma brute force at {' '.join(WGMMA_SHAPES)}, "
              f"mma at {' '.join(MMA_SHAPES)}, sampled variants at the odd shapes")
    print(f"layernorm_linear: tuned at {' '.join(shapes)} in {precision}, {seconds:g} s each; "
          "PyTorch eager and torch.compile")


def shape_arg(text):
    tokens, hidden = text.split("x")
    return f"m={tokens},n={hidden},k={hidden}"


def table(rows, precision, device):
    return against_pytorch.gemm_table(
        rows, f"y = LayerNorm(x)·Wᵀ + b on {device}, {precision} (median, warm L2, as ktune times a GEMM)",
        "tokens x hidden", "GEMM alone (cuBLASLt, graphed)")


def run(context):
    shapes, precision, seconds = settings(context)
    log = Log(context.out("layernorm_linear.log"), truncate=True)
    # check(label, space, shape, precision, *strategy)
    check = functools.partial(against_pytorch.check_tune, context, log, "layernorm_linear")
    if context.environ.get("KTUNE_LNL_CHECK", "1") == "1":
        space = narrow.load(os.path.join(context.root, "search_spaces", "layernorm_linear.cuda.json"))
        paths = {path: narrow.write(narrow.gemm_path_space(space, path),
                                    os.path.join(context.work, f"layernorm_linear-{path}.cuda.json"))
                 for path in ("wgmma", "mma")}
        log("== layernorm_linear: every wgmma variant on odd shapes")
        for precision_checked, shapes_checked in (("bf16", WGMMA_SHAPES), ("fp16", WGMMA_SHAPES[:1])):
            for shape in shapes_checked:
                check("wgmma", paths["wgmma"], shape, precision_checked, "--strategy", "brute_force")
        log("== layernorm_linear: every mma.sync variant on odd shapes")
        for shape in MMA_SHAPES:
            check("mma", paths["mma"], shape, "bf16", "--strategy", "brute_force")
        log("== layernorm_linear: sampled variants (all paths) at the odd shapes")
        for precision_checked in ("fp32", "fp16", "bf16"):
            for shape in context.family("layernorm_linear").odd_shapes:
                check("sampled", None, shape_text(shape), precision_checked, "--strategy", "random",
                      "--budget", "16")
        log(*judge.not_ok(context.path("layernorm_linear-check.db"), limit=40))
    if context.environ.get("KTUNE_LNL_BENCH", "1") != "1":
        return
    log(against_pytorch.run(context, "layernorm_linear", "baseline_layernorm_linear", shapes, precision, seconds,
                               "layernorm_linear", shape_arg, table))
