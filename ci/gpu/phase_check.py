"""ci/gpu-check check: every memory-bound CUDA family at its odd shapes (family.json) in fp32, fp16
and bf16; the variants a short random check rarely draws, each from a narrowed copy of its
family's space (narrow.FEATURES), in fp32 and bf16; then the fault-injection family. Writes
check.log and faults.json to the output."""
import glob
import os
import threading

from . import families, judge, ktune, narrow
from .families import shape_text
from .context import Log

PRECISIONS = ["fp32", "fp16", "bf16"]
FEATURE_PRECISIONS = ["fp32", "bf16"]


def label_of(shape):
    return shape.replace("=", "_").replace(",", "_")


def odd_shapes(context, kernel):
    return [shape_text(s) for s in context.family(kernel).odd_shapes]


# The feature checks skip the tiniest odd shapes (a row of a few columns holds none of the
# variants); rows split over a cluster need rows wider than one block takes, so that feature runs
# at the odd shapes of more than 4096 columns and at 3 x 8192.
FEATURE_MIN_ELEMENTS = 1000
CLUSTER_MIN_COLS = 4096
CLUSTER_EXTRA_SHAPE = {"rows": 3, "cols": 8192}


def elements(shape):
    product = 1
    for value in shape.values():
        product *= value
    return product


def row_width(shape):
    """The width of the rows the row kernels see: cols, or an image plane's height x width."""
    return shape.get("cols") or shape.get("height", 0) * shape.get("width", 0)


def feature_shapes(context, kernel, feature):
    """The odd shapes of the family where the feature's variants are valid, largest last."""
    family = context.family(kernel)
    shapes = [s for s in family.odd_shapes if elements(s) >= FEATURE_MIN_ELEMENTS]
    if feature == "cluster":
        # A family whose dims are not rows x cols names its own wide shape (shapes.wide).
        shapes = [s for s in shapes if row_width(s) > CLUSTER_MIN_COLS] + [family.wide_shape or CLUSTER_EXTRA_SHAPE]
    return [shape_text(s) for s in shapes]


def check_precision(context, precision, log):
    """One precision of every family; False if a check failed."""
    passed = True
    for kernel in context.kernels:
        for shape in odd_shapes(context, kernel):
            result = context.path(f"check-{kernel}-{precision}-{label_of(shape)}.json")
            rc = ktune.run(context.ktune, ktune.tune_args(
                kernel, "cuda", shape, precision, "--budget", "24", "--max-seconds-per-config", "0.02",
                "--config-timeout", "10", "--time-limit", "15", "--db", context.path(f"check-{precision}.db"),
                "--no-export", "--json"), stdout=result, stderr=context.path(f"check-{kernel}.err"))
            ok, line = judge.check_line(kernel, precision, shape, rc, result)
            log(line)
            passed &= ok
    return passed


def feature_spaces(context, precision):
    return narrow.write_feature_spaces(os.path.join(context.root, "search_spaces"),
                                       context.path(f"feature-spaces-{precision}"))


def check_features(context, precision, log):
    """The narrowed feature spaces in one precision; False if a check failed."""
    passed = True
    for kernel, feature, space in feature_spaces(context, precision):
        if kernel not in context.kernels:
            continue
        for shape in feature_shapes(context, kernel, feature):
            name = f"{kernel}.{feature}"
            result = context.path(f"feature-{name}-{precision}-{label_of(shape)}.json")
            rc = ktune.run(context.ktune, ktune.tune_args(
                kernel, "cuda", shape, precision, "--space", space, "--budget", "12", "--max-seconds-per-config",
                "0.02", "--config-timeout", "10", "--time-limit", "15",
                "--db", context.path(f"check-features-{precision}.db"), "--no-export", "--json"),
                stdout=result, stderr=context.path(f"check-{kernel}.err"))
            ok, line = judge.check_line(f"{kernel}:{feature}", precision, shape, rc, result)
            log(line)
            passed &= ok
    return passed


def run(context):
    print("== correctness: every CUDA family, odd shapes, three precisions", flush=True)
    # Progress goes straight to the output folder, so a run cut short still shows how far it got;
    # the three precisions and the two feature checks run side by side on the GPU.
    jobs = [(check_precision, p, context.out(f"check-{p}.log")) for p in PRECISIONS] + \
           [(check_features, p, context.out(f"check-features-{p}.log")) for p in FEATURE_PRECISIONS]
    results = [None] * len(jobs)

    def work(index, job, precision, path):
        results[index] = job(context, precision, Log(path, truncate=True, echo=False))
    threads = [threading.Thread(target=work, args=(i, *job)) for i, job in enumerate(jobs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if not all(results):
        context.fail()
    # One check log instead of five, so every phase's files fit the 8 that come back.
    logs = [path for _, _, path in jobs]
    with open(context.out("check.log"), "w") as combined:
        for path in logs:
            with open(path) as f:
                combined.write(f.read())
    for path in logs:
        os.remove(path)
    with open(context.out("check.log")) as f:
        print(f.read(), end="", flush=True)
    log = Log(context.out("check.log"))
    # Every config that was not `ok`, with its message, so a failure can be read without the databases.
    for path in sorted(glob.glob(context.path("check-*.db"))):
        lines = judge.not_ok(path, with_family=True)
        if lines:
            log(*lines)
    faults(context)


def faults(context):
    print("== faults: out-of-bounds write, infinite loop, wrong result, NaN, compile error, out of memory", flush=True)
    environ = dict(os.environ, KTUNE_ENABLE_TEST_FAMILIES="1")
    family = next(f for f in families.load(context.root).values() if f.test_only)
    name, shape = family.name, shape_text(family.odd_shapes[0])
    rc = ktune.run(context.ktune, ["tune", "-k", name, "-b", "cuda", "--shape", shape, "--config-timeout", "10",
                                   "--db", context.path("faults.db"), "--no-export", "--json"],
                   stdout=context.path("faults.json"), stderr=context.path("faults.err"), env=environ)
    print(f"exit {rc}", flush=True)
    summary = ktune.tune_result(ktune.load_json(context.path("faults.json")))
    if summary is not None:
        print(summary.get("outcomes"), summary["best"]["config"] if summary.get("best") else None, flush=True)
        with open(context.out("faults.json"), "w") as f, open(context.path("faults.json")) as source:
            f.write(source.read())
    try:
        print("\n".join(judge.measurements(context.path("faults.db"))), flush=True)
    except Exception as e:
        print(f"faults.db: {e}", flush=True)


def plan(context):
    print("== check plan")
    for kernel in context.kernels:
        print(f"{kernel}: {' '.join(odd_shapes(context, kernel))} in {' '.join(PRECISIONS)}")
    for kernel, feature, _ in feature_spaces(context, "plan"):
        if kernel in context.kernels:
            print(f"{kernel}:{feature}: {' '.join(feature_shapes(context, kernel, feature))} in "
                  f"{' '.join(FEATURE_PRECISIONS)}")
    print("fault_injection: the fault-injection family at its odd shape")
