"""ci/gpu-check gemm [SECONDS]: the GEMM family. A smoke test of 4 wgmma variants (a hang or wrong
result there skips the rest); unless KTUNE_GEMM_CHECK=0, every wgmma variant brute-forced on odd
shapes in bf16, fp16, tf32 and fp8, every mma.sync variant on odd shapes, sampled variants (all
paths) at the family's odd shapes (family.json) over five precisions (KTUNE_GEMM_CHECK_PRECISIONS,
e.g. "bf16 fp16", keeps only those of each), and the SASS of the largest cubins; then, unless
KTUNE_GEMM_BENCH=0, each shape of KTUNE_GEMM_SHAPES (m,n,k ...) in each of
KTUNE_GEMM_PRECISIONS (default bf16 fp16) tuned over the wgmma variants (SECONDS each, default 20)
against cuBLASLt and cuBLAS in the same run. KTUNE_GEMM_NARROW ("block_m=128,192 stages=3,4 ...")
narrows the bench's wgmma space and KTUNE_GEMM_STRATEGY (e.g. brute_force) picks its search; the
bench then also ranks every config it measured per shape (gemm-configs.md, the best
KTUNE_GEMM_RANKED, default 12). Writes gemm.log, gemm-table.md, gemm-baseline.json and
gemm-errors.log to the output."""
import json
import os
import sqlite3

from . import judge, ktune, narrow, sass, table_gemm
from .bench_tune import bench_against_baseline
from .context import Log, bad_setting
from .families import shape_text

SMOKE_SHAPE = "m=2000,n=1800,k=264"
# The third shape's tiles do not fill the GPU: split-K variants (2, 4, 8) are valid there. The
# fourth has an odd number of tile rows at every block_m: the last cluster's second block computes
# nothing but still loads and multicasts its half of B.
WGMMA_SHAPES = ["m=2000,n=1800,k=272", "m=77,n=200,k=16", "m=77,n=1000,k=4112,epilogue=1",
                "m=1100,n=1000,k=208,epilogue=2"]
WGMMA_PRECISIONS = ["bf16", "fp16", "tf32", "fp8_e4m3"]
# Both layouts of B.
MMA_SHAPES = ["m=2000,n=1800,k=272", "m=77,n=200,k=40,b_layout=1", "m=1000,n=1000,k=96,b_layout=1,epilogue=3"]
MMA_PRECISIONS = ["bf16", "fp16"]
SAMPLED_PRECISIONS = ["fp32", "tf32", "fp16", "bf16", "fp8_e4m3"]
BENCH_SHAPES = ("4096,4096,4096 8192,8192,8192 4096,14336,4096 4096,4096,14336 16384,14336,4096 "
                "16384,4096,14336 8192,11008,4096 8192,4096,11008")
SASS_INSTRUCTIONS = r"[HQ]GMMA\.[0-9A-Zx.]+|UTMALDG[.0-9A-Z]*|LDL|STL"


def label_of(shape):
    return shape.replace("=", "_").replace(",", "_")


def check_tune(context, log, label, space, shape, precision, result, *strategy):
    """One brute-force or sampled check tune, judged; False if it failed."""
    rc = ktune.run(context.ktune, ktune.tune_args(
        "gemm", "cuda", shape, precision, *(["--space", space] if space else []), *strategy,
        "--max-seconds-per-config", "0.005", "--config-timeout", "20", "--db", context.path("gemm-check.db"),
        "--no-export", "--json"), stdout=context.path(result), stderr=context.path("gemm-check.err"))
    ok, line = judge.check_line(label, precision, shape, rc, context.path(result))
    log(line)
    return ok


def check_each(context, log, label, space, shapes, precisions, prefix, *strategy):
    """check_tune of every shape in every precision that KTUNE_GEMM_CHECK_PRECISIONS keeps, each
    into PREFIX-PRECISION-SHAPE.json; a failed one fails the phase."""
    for precision in check_precisions(context, precisions):
        for shape in shapes:
            if not check_tune(context, log, label, space, shape, precision,
                              f"{prefix}-{precision}-{label_of(shape)}.json", *strategy):
                context.fail()


def run(context):
    log = Log(context.out("gemm.log"), truncate=True)
    spaces = narrow.write_gemm_path_spaces(os.path.join(context.root, "search_spaces", "gemm.cuda.json"), context.work)
    log("== gemm: smoke test (4 wgmma variants); a hang or wrong result here skips the rest")
    rc = ktune.run(context.ktune, ktune.tune_args(
        "gemm", "cuda", SMOKE_SHAPE, "bf16", "--space", spaces["wgmma"], "--strategy", "random", "--budget", "4",
        "--max-seconds-per-config", "0.005", "--config-timeout", "10", "--db", context.path("gemm-smoke.db"),
        "--no-export", "--json"), stdout=context.path("gemm-smoke.json"), stderr=context.path("gemm-check.err"))
    ok, line = judge.check_line("gemm wgmma smoke", "bf16", SMOKE_SHAPE, rc, context.path("gemm-smoke.json"))
    log(line)
    if not ok:
        log(*tail(context.path("gemm-check.err"), 5))
        try:
            log(*[line.replace(" | ", " ") for line in judge.measurements(context.path("gemm-smoke.db"), 600)])
        except Exception as e:
            log(f"gemm-smoke.db: {e}")
        context.status = 1
        raise SystemExit(1)
    if context.environ.get("KTUNE_GEMM_CHECK", "1") == "1":
        log("== gemm: every wgmma variant on odd shapes")
        check_each(context, log, "gemm wgmma", spaces["wgmma"], WGMMA_SHAPES, WGMMA_PRECISIONS, "gemm-check-wgmma",
                   "--strategy", "brute_force")
        log("== gemm: every mma.sync variant on odd shapes, both layouts of B")
        check_each(context, log, "gemm mma", spaces["mma"], MMA_SHAPES, MMA_PRECISIONS, "gemm-check-mma",
                   "--strategy", "brute_force")
        log("== gemm: sampled variants (all paths) over precisions, layouts and epilogues")
        check_each(context, log, "gemm", None, odd_shapes(context), SAMPLED_PRECISIONS, "gemm-check",
                   "--strategy", "random", "--budget", "16")
        log(*judge.not_ok(context.path("gemm-check.db"), limit=40))
        log("== gemm: SASS of the three largest cubins")
        sass.report(os.environ["KTUNE_CACHE_DIR"], "gemm", 3, SASS_INSTRUCTIONS, log)

    if context.environ.get("KTUNE_GEMM_BENCH", "1") == "1":
        log("== gemm: benchmark against cuBLASLt")
        seconds = context.seconds(20)
        shapes = context.environ.get("KTUNE_GEMM_SHAPES", BENCH_SHAPES).split()
        precisions = context.environ.get("KTUNE_GEMM_PRECISIONS", "bf16 fp16").split()

        space = spaces["wgmma"]
        narrowing = parse_narrowing(context.environ.get("KTUNE_GEMM_NARROW", ""))
        if narrowing:
            space = narrow.write(narrow.narrow(narrow.load(space), narrowing), context.path("gemm-bench.cuda.json"))
            log(f"bench space: wgmma narrowed to {narrowing}")
        strategy = context.environ.get("KTUNE_GEMM_STRATEGY")

        def tune_args(shape, precision):
            m, n, k = shape.split(",")
            return ktune.tune_args(
                "gemm", "cuda", f"m={m},n={n},k={k}", precision, "--space", space,
                *(["--strategy", strategy] if strategy else []),
                "--time-limit", f"{seconds:g}", "--config-timeout", "30", "--db", context.path("gemm-bench.db"),
                "--no-export", "--json")

        bench_against_baseline(context, log, "gemm", "baseline_gemm", "gemm-check.err", shapes, precisions,
                               tune_args, table_gemm.main)
        ranking = rank_configs(context.path("gemm-bench.db"), int(context.environ.get("KTUNE_GEMM_RANKED", "12")))
        with open(context.out("gemm-configs.md"), "w") as f:
            f.write(ranking)
    write_errors(context, ["gemm-check.err", "gemm-bench.err"], "gemm-errors.log")


def parse_narrowing(text):
    """{"block_m": [128, 192], ...} from "block_m=128,192 stages=3,4" (numbers where they are)."""
    narrowing = {}
    for item in text.split():
        name, _, values = item.partition("=")
        if not name or not values:
            bad_setting(f"KTUNE_GEMM_NARROW: '{item}' is not NAME=VALUE,VALUE...")
        narrowing[name] = [int(v) if v.lstrip("-").isdigit() else v for v in values.split(",")]
    return narrowing


def rank_configs(db_path, count):
    """Markdown: for each problem of the database, its `count` fastest verified configs (the
    parameters that differ between them), their median and TFLOP/s."""
    with sqlite3.connect(db_path) as db:
        rows = db.execute("select p.dims, p.precision, m.config, m.median_ns from measurements m "
                          "join problems p on p.id = m.problem_id where m.outcome = 'ok' "
                          "order by p.id, m.median_ns").fetchall()
    by_problem = {}
    for dims, precision, config, median in rows:
        by_problem.setdefault((dims, precision), []).append((json.loads(config), median))
    parts = []
    for (dims, precision), measured in by_problem.items():
        shape = dict(json.loads(dims))
        flops = 2 * shape["m"] * shape["n"] * shape["k"]
        best = measured[:count]
        varying = [name for name in best[0][0] if len({str(c.get(name)) for c, _ in measured}) > 1]
        parts.append(f"### {shape['m']}x{shape['n']}x{shape['k']} {precision}: {len(measured)} configs verified\n\n"
                     f"| {' | '.join(varying)} | median us | TFLOP/s |\n|{'---|' * len(varying)}---:|---:|\n")
        for config, median in best:
            cells = " | ".join(str(config.get(name)) for name in varying)
            parts.append(f"| {cells} | {median / 1e3:.1f} | {flops / median / 1e3:.0f} |\n")
        parts.append("\n")
    return "".join(parts) or "no verified configs\n"


def check_precisions(context, precisions):
    """The precisions of a check that KTUNE_GEMM_CHECK_PRECISIONS keeps (all when it is unset)."""
    kept = context.environ.get("KTUNE_GEMM_CHECK_PRECISIONS")
    return [p for p in precisions if kept is None or p in kept.split()]


def odd_shapes(context):
    return [shape_text(s) for s in context.family("gemm").odd_shapes]


def tail(path, count):
    try:
        with open(path) as f:
            return [line.rstrip("\n") for line in f.readlines()[-count:]]
    except OSError:
        return []


def write_errors(context, names, output):
    """The last 20 lines of each error file, headed by its name when there are several (as `tail`)."""
    parts = []
    for name in names:
        path = context.path(name)
        if os.path.exists(path):
            head = f"==> {name} <==\n" if len(names) > 1 else ""
            parts.append(head + "".join(line + "\n" for line in tail(path, 20)))
    if parts:
        with open(context.out(output), "w") as f:
            f.write("\n".join(parts))


def plan(context):
    space = narrow.gemm_path_space(narrow.load(os.path.join(context.root, "search_spaces", "gemm.cuda.json")), "wgmma")
    print("== gemm plan")
    print(f"wgmma space: {len(space.get('starting_points', []))} starting points kept, default {space['default']}")
    print(f"smoke: {SMOKE_SHAPE} bf16")
    if context.environ.get("KTUNE_GEMM_CHECK", "1") == "1":
        print(f"wgmma brute force: {' '.join(WGMMA_SHAPES)} in {' '.join(check_precisions(context, WGMMA_PRECISIONS))}")
        print(f"mma brute force: {' '.join(MMA_SHAPES)} in {' '.join(check_precisions(context, MMA_PRECISIONS))}")
        print(f"sampled: {' '.join(odd_shapes(context))} in {' '.join(check_precisions(context, SAMPLED_PRECISIONS))}")
    if context.environ.get("KTUNE_GEMM_BENCH", "1") == "1":
        print(f"bench: {context.environ.get('KTUNE_GEMM_SHAPES', BENCH_SHAPES)} in "
              f"{context.environ.get('KTUNE_GEMM_PRECISIONS', 'bf16 fp16')}, {context.seconds(20):g} s each")
