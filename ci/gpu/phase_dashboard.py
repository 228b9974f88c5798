"""ci/gpu-check dashboard [SECONDS]: the regression dashboard's data from real runs. Unless
KTUNE_DASH_TUNE=0, copy's baseline config tuned once at a large size (bench also times the default
and keeps the faster of the two at each size), then every family tuned at each shape of
search_spaces/suites/transformer.json (SECONDS of evaluation each, default 3); then `ktune bench`
over the suite KTUNE_DASH_BENCHES times (default 2). KTUNE_DASH_DB carries an earlier dashboard.db
in, to add runs to its history. Writes bench-N.json and dashboard.db to the output."""
import json
import os
import shutil
import sqlite3
import subprocess

from . import ktune
from .families import shape_text

COPY_SHAPE = "n=67108864"


def suite_shapes(context):
    """(family, shape) of every shape of the transformer suite."""
    with open(os.path.join(context.root, "search_spaces", "suites", "transformer.json")) as f:
        suite = json.load(f)
    return [(family, shape_text(shape)) for family, shapes in suite["shapes"].items() for shape in shapes]


def run(context):
    seconds = context.seconds(3)
    db = context.path("dashboard.db")
    if context.environ.get("KTUNE_DASH_DB"):
        shutil.copy(context.environ["KTUNE_DASH_DB"], db)
    print(f"== dashboard: tune the transformer suite, {context.seconds_arg or 3} s per shape", flush=True)
    if context.environ.get("KTUNE_DASH_TUNE", "1") == "1":
        rc = ktune.run(context.ktune, ktune.tune_args(
            "copy", "cuda", COPY_SHAPE, "bf16", "--time-limit", f"{seconds:g}", "--max-seconds-per-config", "0.05",
            "--db", db, "--no-export", "--json"),
            stdout=subprocess.DEVNULL, stderr=context.path("dash-tune.err"))
        print(f"tune copy: exit {rc}", flush=True)
        for kernel, shape in suite_shapes(context):
            if kernel not in context.kernels:
                continue
            rc = ktune.run(context.ktune, ktune.tune_args(
                kernel, "cuda", shape, "bf16", "--time-limit", f"{seconds:g}", "--max-seconds-per-config", "0.05",
                "--config-timeout", "10", "--db", db, "--no-export", "--json"),
                stdout=subprocess.DEVNULL, stderr=context.path("dash-tune.err"))
            print(f"tune {kernel} {shape}: exit {rc}", flush=True)
    for i in range(1, int(context.environ.get("KTUNE_DASH_BENCHES", "2")) + 1):
        print(f"== dashboard: bench {i}", flush=True)
        rc = ktune.run(context.ktune, ["bench", "-b", "cuda", "--suite", "transformer", "--repetitions", "5",
                                       "--max-seconds-per-repetition", "0.05", "--db", db,
                                       "--out", context.out(f"bench-{i}.json")])
        print(f"bench {i}: exit {rc}", flush=True)
    with sqlite3.connect(db) as connection:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    shutil.copy(db, context.out("dashboard.db"))


def plan(context):
    benches = context.environ.get("KTUNE_DASH_BENCHES", "2")
    print(f"== dashboard plan: {context.seconds(3):g} s per shape, {benches} benches")
    print(f"copy {COPY_SHAPE}")
    for kernel, shape in suite_shapes(context):
        if kernel in context.kernels:
            print(f"{kernel} {shape}")
