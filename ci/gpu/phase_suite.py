"""ci/gpu-check suite [SECONDS]: each memory-bound CUDA family tuned over a transformer shape
suite in bf16 (tokens KTUNE_SUITE_ROWS, default 4096 32768 256 1, x hidden KTUNE_SUITE_COLS,
default 4096 8192, mapped to each family's dims by its family.json "transformer"), at most SECONDS
(default 6; KTUNE_SUITE_SECONDS under `all`) of evaluation per tune, the phase held to
KTUNE_SUITE_BUDGET seconds of wall time (default 540) by giving each tune less when needed
(suite_model.py); the PyTorch baselines of each shape. One shared database (resume matches
device + source + problem + config). Writes suite-progress.log, suite-table.md and suite.json to
the output (the log ends up under the table).

The model counts a tune's set-up cost in tensor elements: the problem's bytes as ktune counts
them (`ktune space --json` reports them) over 2 bytes of a bf16 element."""
import os
import shutil
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from . import ktune, suite_model, table_families
from .context import python_module
from .families import parse_shape, shape_text

# swiglu/geglu at 32768x8192 (1 GiB input, 805 M elements to set up on the host) are left out for
# time unless KTUNE_SUITE_BIG_GATED=1; memory would be fine (about 8 GB host, 1.5 GiB device).
BIG_GATED_FAMILIES = ("swiglu", "geglu")
BIG_GATED_ELEMENTS = 32768 * 8192
BF16_BYTES = 2
# `ktune space` reports a problem's bytes for a nominal device of this architecture: no GPU needed.
NOMINAL_ARCH = "sm_90a"


class Settings:
    def __init__(self, context):
        env = context.environ
        self.budget = float(env.get("KTUNE_SUITE_BUDGET", "540"))
        self.rows = [int(r) for r in env.get("KTUNE_SUITE_ROWS", "4096 32768 256 1").split()]
        self.cols = [int(c) for c in env.get("KTUNE_SUITE_COLS", "4096 8192").split()]
        self.kernels = env.get("KTUNE_SUITE_KERNELS", "").split() or context.kernels
        self.big_gated = env.get("KTUNE_SUITE_BIG_GATED", "0") == "1"
        if context.phase == "suite":
            self.cap = context.seconds(6)
        else:
            self.cap = float(env.get("KTUNE_SUITE_SECONDS", "6"))


def left_out(family, rows, cols, settings):
    """Why the plan leaves this tune out, or None."""
    if not settings.big_gated and family.name in BIG_GATED_FAMILIES and rows * cols >= BIG_GATED_ELEMENTS:
        return "left out for time (KTUNE_SUITE_BIG_GATED=1 includes it)"
    uneven = family.uneven_at(rows, cols)
    if uneven:
        return f"hidden {cols} does not map to its dims ({uneven})"
    return None


def elements(context, family, shape):
    """Tensor elements of the problem: its bytes in bf16 over 2. Without `ktune space` (or a ktune
    that does not report bytes), an estimate: one input and one output of the dims' product."""
    try:
        size, _ = ktune.problem_size(context.ktune, family.name, "cuda", shape, "bf16", arch=NOMINAL_ARCH)
        return int(size) // BF16_BYTES
    except Exception:
        product = 1
        for value in parse_shape(shape).values():
            product *= value
        return 2 * product


def make_plan(context, settings):
    """[(kind, kernel, rows, cols, shape, elements)] in order, and the plan's notes (left-out tunes)."""
    loaded = {name: context.family(name) for name in settings.kernels}
    steps, notes, sized = [], [], []
    for rows in settings.rows:
        for cols in settings.cols:
            steps.append(["baselines", "-", rows, cols, None, 0])
            for name in settings.kernels:
                why = left_out(loaded[name], rows, cols, settings)
                if why:
                    notes.append(f"plan: {name} {rows}x{cols} {why}")
                    continue
                shape = shape_text(loaded[name].transformer_shape(rows, cols))
                steps.append(["tune", name, rows, cols, shape, 0])
                sized.append(steps[-1])
    with ThreadPoolExecutor(max_workers=8) as pool:
        for step, count in zip(sized, pool.map(lambda s: elements(context, loaded[s[1]], s[4]), sized)):
            step[5] = count
    return [tuple(s) for s in steps], notes


def tune_summary(path):
    """One line about a tune's JSON summary."""
    s = ktune.tune_result(ktune.load_json(path))
    if s is None:
        return "no JSON"
    b, d = s.get("best"), s.get("default")
    configs = f"{s.get('evaluated', 0) + s.get('reused', 0)} of {(s.get('space') or {}).get('valid')} configs"
    if not b:
        return f"no result, {configs}, outcomes {s.get('outcomes')} {s.get('error', '')[:160]}"
    ratio = f"{d['median_ns'] / b['median_ns']:.2f}x" if d else "-"
    return (f"{configs}, tuned {b['bytes_per_second'] / 1e12:.2f} TB/s ({b['median_ns'] / 1e3:.1f} us), "
            f"tuned/default {ratio}, {s.get('stop_reason')}")


def baselines_summary(path):
    """One line about a baselines JSON."""
    document = ktune.load_json(path)
    if not isinstance(document, dict) or "results" not in document:
        return "no JSON"
    r = document["results"]
    errors = [k for k, v in r.items() if not isinstance(v, dict)]
    return (f"copy {r.get('copy', {}).get('tb_s', 0):.2f} TB/s, {sum(isinstance(v, dict) for v in r.values())} cases"
            + (f", errors: {' '.join(errors)}" if errors else ""))


class Progress:
    """suite-progress.log: "[elapsed s] message" lines, also printed."""

    def __init__(self, path):
        self.path, self.start = path, time.time()
        open(path, "w").close()

    def elapsed(self):
        return time.time() - self.start

    def __call__(self, *parts):
        line = f"[{self.elapsed():6.1f} s] " + " ".join(parts)
        print(line, flush=True)
        with open(self.path, "a") as f:
            f.write(line + "\n")

    def note(self, line):
        with open(self.path, "a") as f:
            f.write(line + "\n")


def remake_tables(context, progress_path):
    """The table and the one-file bundle, remade after every step."""
    try:
        with open(context.path("suite-table.md"), "w") as out, open(context.path("suite-report.err"), "w") as err:
            table_families.suite_main([context.work, "--bundle", context.path("suite.json"),
                                       "--progress", progress_path], out=out)
        for name in ("suite-table.md", "suite.json"):
            shutil.copy(context.path(name), context.out(name))
    except Exception as e:  # a table that cannot be made must not stop the suite
        with open(context.path("suite-report.err"), "a") as err:
            err.write(f"{type(e).__name__}: {e}\n")


def run(context):
    settings = Settings(context)
    plan_steps, notes = make_plan(context, settings)
    progress = Progress(context.out("suite-progress.log"))
    for note in notes:
        progress.note(note)
    steps_file = context.path("suite-steps.tsv")  # one line per step done: kind elements limit wall-seconds
    open(steps_file, "w").close()
    tunes_planned = sum(1 for s in plan_steps if s[0] == "tune")
    print(f"== suite: {tunes_planned} tunes and the baselines of each shape, bf16, "
          f"at most {settings.cap:g} s per tune, "
          f"{settings.budget:g} s in all", flush=True)
    progress(f"plan: rows {{{' '.join(map(str, settings.rows))}}} x cols {{{' '.join(map(str, settings.cols))}}}, "
             f"{tunes_planned} tunes, kernels: {' '.join(settings.kernels)}")
    tables = None
    for i, (kind, kernel, rows, cols, shape, count) in enumerate(plan_steps):
        verdict = suite_model.decide(suite_model.read_steps(steps_file), [(s[0], s[5]) for s in plan_steps[i:]],
                                     settings.budget, progress.elapsed(), settings.cap)
        step_start = time.time()
        if kind == "baselines":
            result = context.path(f"suite-baselines-{rows}x{cols}.json")
            _remove(result)
            if not verdict.run:
                progress(f"baselines {rows}x{cols}: skipped, out of time")
                continue
            with open(result, "w") as out, open(result[:-len(".json")] + ".err", "w") as err:
                try:
                    rc = python_module("baseline_families", str(rows), str(cols), stdout=out, stderr=err,
                                       timeout=240).returncode
                except subprocess.TimeoutExpired:
                    rc = 124
        else:
            result = context.path(f"suite-{kernel}-{rows}x{cols}.json")
            _remove(result)
            if not verdict.run:
                progress(f"{kernel} {rows}x{cols}: skipped, out of time")
                continue
            # SIGINT: ktune stops after the config in flight and still prints its JSON.
            rc = ktune.run(context.ktune, ktune.tune_args(
                kernel, "cuda", shape, "bf16", "--time-limit", f"{verdict.limit:.1f}", "--max-seconds-per-config",
                "0.05", "--config-timeout", "10", "--db", context.path("suite.db"), "--no-export", "--json"),
                stdout=result, stderr=context.path(f"suite-{kernel}.err"), timeout=int(verdict.limit) + 150,
                interrupt=True)
        wall = time.time() - step_start
        if kind == "baselines":
            progress(f"baselines {rows}x{cols}: exit {rc}, {wall:.1f} s: {baselines_summary(result)}")
        else:
            progress(f"{kernel} {rows}x{cols}: limit {verdict.limit:.1f} s, exit {rc}, {wall:.1f} s: "
                     f"{tune_summary(result)}",
                     f"[model: F0 {verdict.f0:.1f} s, k {verdict.k:.3g} s/element, B {verdict.b:.1f} s, "
                     f"slack {verdict.slack:.0f} s]")
        # The tables are remade beside the next step (CPU only, a fraction of a second), one at a time.
        if tables:
            tables.join()
        tables = threading.Thread(target=remake_tables, args=(context, progress.path))
        tables.start()
        # What the model learns from: the whole step, the summary after it included.
        with open(steps_file, "a") as f:
            f.write(f"{kind} {count} {verdict.limit:.1f} {time.time() - step_start:.2f}\n")
    if tables:
        tables.join()
    progress("suite done")
    remake_tables(context, progress.path)
    table = context.path("suite-table.md")
    if os.path.exists(table):
        with open(table) as f:
            print(f.read(), end="", flush=True)
    # Two files come back (the device returns at most 8): suite-table.md, with the progress log
    # under the table, and suite.json, every suite JSON and the log in one file.
    if os.path.exists(table) and os.path.getsize(table):
        with open(table, "a") as out, open(progress.path) as log:
            out.write("\nProgress (ci/gpu-check suite):\n\n```\n" + log.read() + "```\n")
        shutil.copy(table, context.out("suite-table.md"))
        os.remove(progress.path)


def _remove(path):
    try:
        os.remove(path)
    except OSError:
        pass


def plan(context):
    settings = Settings(context)
    plan_steps, notes = make_plan(context, settings)
    tunes = sum(1 for s in plan_steps if s[0] == "tune")
    print(f"== suite plan: {tunes} tunes and the baselines of each shape, bf16, at most {settings.cap:g} s per tune, "
          f"{settings.budget:g} s in all")
    for line in notes:
        print(line)
    first = next((i for i, s in enumerate(plan_steps) if s[0] == "tune"), None)
    if first is not None:
        verdict = suite_model.decide([], [(s[0], s[5]) for s in plan_steps[first:]], settings.budget, 0.0, settings.cap)
        print(f"the model's start: the first tune gets {verdict.limit:.1f} s (F0 {verdict.f0:.1f} s, "
              f"k {verdict.k:.3g} s/element, B {verdict.b:.1f} s, slack {verdict.slack:.0f} s)")
    for kind, kernel, rows, cols, shape, count in plan_steps:
        print(f"baselines {rows}x{cols}" if kind == "baselines" else f"  {kernel} {shape}: {count} elements")
