"""ci/gpu-check attention [SECONDS]: the flash_attention family. Unless KTUNE_ATTENTION_CHECK=0:
every variant brute-forced on odd shapes in bf16 and fp16, and fp32 too, which only the portable
simt path takes; then the resources and tensor-core instructions of the largest cubins. Unless
KTUNE_ATTENTION_BENCH=0: each shape of KTUNE_ATTENTION_SHAPES (B,H,N,D,CAUSAL; default 16k tokens
with heads*head_dim = 2048, seq 1k-16k, head_dim 64 and 128, causal and not) in each of
KTUNE_ATTENTION_PRECISIONS (default bf16) tuned by brute force (at most SECONDS each, default 20),
against PyTorch SDPA on cuDNN and on FlashAttention 2 in the same run. Writes attention.log,
attention-table.md, attention-baseline.json and attention-errors.log to the output.
KTUNE_ATTENTION_PASS=backward does all of it for flash_attention_backward against SDPA's backward
(written as attention-backward*). KTUNE_ATTENTION_PATH=mma (or another value of the space's path)
benchmarks that path alone, so that a short tune is not spent on a slow portable config."""
import os

from . import judge, ktune, narrow, sass, table_attention
from .bench_tune import bench_against_baseline
from .context import Log
from .phase_gemm import label_of, write_errors

CHECK_PRECISIONS = ["bf16", "fp16", "fp32"]
# One query and key; a causal 77; grouped heads with a long key side; more queries than keys,
# causal; a causal long key side; 4097 both ways.
CHECK_SHAPES = ["batch=1,heads=1,seq_q=1,seq_kv=1,head_dim=64",
                "batch=1,heads=2,seq_q=77,seq_kv=77,head_dim=64,causal=1",
                "batch=2,heads=4,kv_heads=2,seq_q=1000,seq_kv=4097,head_dim=128",
                "batch=1,heads=3,kv_heads=1,seq_q=1000,seq_kv=77,head_dim=128,causal=1",
                "batch=1,heads=2,seq_q=300,seq_kv=4097,head_dim=64,causal=1",
                "batch=1,heads=2,seq_q=4097,seq_kv=4097,head_dim=128,causal=1"]
BENCH_SHAPES = ("16,32,1024,64,0 16,32,1024,64,1 4,32,4096,64,0 4,32,4096,64,1 1,32,16384,64,0 1,32,16384,64,1 "
                "16,16,1024,128,0 16,16,1024,128,1 8,16,2048,128,0 8,16,2048,128,1 4,16,4096,128,0 4,16,4096,128,1 "
                "2,16,8192,128,0 2,16,8192,128,1 1,16,16384,128,0 1,16,16384,128,1")
SASS_INSTRUCTIONS = r"HMMA\.[0-9A-Z.]+|[HQ]GMMA\.[0-9A-Zx.]+|LDSM[.0-9A-Z]*|LDL|STL"


def family(context):
    """(kernel, output name) of the pass KTUNE_ATTENTION_PASS picks."""
    if context.environ.get("KTUNE_ATTENTION_PASS", "forward") == "backward":
        return "flash_attention_backward", "attention-backward"
    return "flash_attention", "attention"


def run(context):
    kernel, name = family(context)
    os.environ["KTUNE_ATTENTION_PASS"] = "backward" if kernel.endswith("backward") else "forward"  # the baseline's
    log = Log(context.out(f"{name}.log"), truncate=True)
    if context.environ.get("KTUNE_ATTENTION_CHECK", "1") == "1":
        log(f"== {kernel}: every variant on odd shapes")
        for precision in CHECK_PRECISIONS:
            for shape in CHECK_SHAPES:
                result = context.path(f"{name}-check-{precision}-{label_of(shape)}.json")
                rc = ktune.run(context.ktune, ktune.tune_args(
                    kernel, "cuda", shape, precision, "--strategy", "brute_force",
                    "--max-seconds-per-config", "0.005", "--config-timeout", "20",
                    "--db", context.path(f"{name}-check.db"), "--no-export", "--json"),
                    stdout=result, stderr=context.path(f"{name}-check.err"))
                ok, line = judge.check_line(kernel, precision, shape, rc, result)
                log(line)
                if not ok:
                    context.fail()
        log(*judge.not_ok(context.path(f"{name}-check.db"), limit=40))
        log(f"== {kernel}: resources and tensor-core instructions of the largest cubins")
        sass.report(context.environ["KTUNE_CACHE_DIR"], kernel, 6, SASS_INSTRUCTIONS, log)
    if context.environ.get("KTUNE_ATTENTION_BENCH", "1") == "1":
        log(f"== {kernel}: benchmark against PyTorch SDPA (cuDNN, FlashAttention 2)")
        seconds = context.seconds(20)
        shapes = context.environ.get("KTUNE_ATTENTION_SHAPES", BENCH_SHAPES).split()
        precisions = context.environ.get("KTUNE_ATTENTION_PRECISIONS", "bf16").split()

        pinned = path_space(context, kernel, context.environ.get("KTUNE_ATTENTION_PATH"))

        def tune_args(shape, precision):
            batch, heads, seq, head_dim, causal = shape.split(",")
            return ktune.tune_args(
                kernel, "cuda",
                f"batch={batch},heads={heads},seq_q={seq},seq_kv={seq},head_dim={head_dim},causal={causal}",
                precision, "--strategy", "brute_force", "--time-limit", f"{seconds:g}", "--config-timeout", "30",
                "--db", context.path(f"{name}-bench.db"), "--no-export", "--json", *pinned)

        bench_against_baseline(context, log, name, "baseline_attention", f"{name}-bench.err", shapes,
                               precisions, tune_args, table_attention.main)
    write_errors(context, [f"{name}-check.err", f"{name}-bench.err"], f"{name}-errors.log")


def path_space(context, kernel, path):
    """["--space", file] of `kernel`'s CUDA space with its path pinned to `path` (its first starting
    point of that path the default), or [] without one."""
    if not path:
        return []
    space = narrow.load(os.path.join(context.root, "search_spaces", f"{kernel}.cuda.json"))
    points = [p for p in space.get("starting_points", []) if p.get("path") == path]
    default = points[0] if points else {**space["default"], "path": path}
    return ["--space", narrow.write(narrow.narrow(space, {"path": [path]}, default=default),
                                    context.path(f"{kernel}-{path}.cuda.json"))]


def plan(context):
    print("== attention plan")
    print(f"family: {family(context)[0]}")
    if context.environ.get("KTUNE_ATTENTION_CHECK", "1") == "1":
        print(f"check: {' '.join(CHECK_SHAPES)} in {' '.join(CHECK_PRECISIONS)}")
    if context.environ.get("KTUNE_ATTENTION_BENCH", "1") == "1":
        if context.environ.get("KTUNE_ATTENTION_PATH"):
            print(f"bench path: {context.environ['KTUNE_ATTENTION_PATH']} alone")
        print(f"bench: {context.environ.get('KTUNE_ATTENTION_SHAPES', BENCH_SHAPES)} in "
              f"{context.environ.get('KTUNE_ATTENTION_PRECISIONS', 'bf16')}, {context.seconds(20):g} s each")
