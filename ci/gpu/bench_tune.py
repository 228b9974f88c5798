"""The benchmark half of the GEMM and attention phases: the PyTorch baseline of every shape and
precision, then one ktune tune of each, then the table of the one against the other.

Files, for a phase NAME: NAME-baseline.json (the baseline's JSON), NAME-bench-PRECISION-SHAPE.json
(each tune's `--json`, the shape's commas as underscores) and NAME-bench.err in the work folder;
NAME-table.md and a copy of NAME-baseline.json in the output. A table that cannot be made fails
the phase."""
import shutil
import time

from . import ktune
from .context import make_table, python_module


def bench_against_baseline(context, log, name, baseline, baseline_err, shapes, precisions, tune_args, table_main):
    """Runs the module `baseline` (its errors appended to `baseline_err`), then ktune with
    `tune_args(shape, precision)` for every shape in every precision, then the table that
    `table_main` (a table module's main) prints of them."""
    with open(context.path(f"{name}-baseline.json"), "w") as out, open(context.path(baseline_err), "a") as err:
        rc = python_module(baseline, "--shapes", *shapes, "--precisions", *precisions,
                           stdout=out, stderr=err).returncode
    log(f"baseline exit {rc}")
    tunes = []
    for shape in shapes:
        for precision in precisions:
            result = context.path(f"{name}-bench-{precision}-{shape.replace(',', '_')}.json")
            start = time.time()
            rc = ktune.run(context.ktune, tune_args(shape, precision), stdout=result,
                           stderr=context.path(f"{name}-bench.err"))
            log(f"tune {shape} {precision}: exit {rc}, {int(time.time() - start)} s")
            tunes.append(result)
    text = make_table(table_main, context.path(f"{name}-baseline.json"), *tunes)
    with open(context.out(f"{name}-table.md"), "w") as f:
        f.write(text)
    log(text.rstrip("\n"))
    shutil.copy(context.path(f"{name}-baseline.json"), context.out(f"{name}-baseline.json"))
    if text.startswith("no table"):
        context.fail()
