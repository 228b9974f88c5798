"""ci/gpu-check t1: `ktune tune --t1` on a kernel of our own (tests/data/t1/scaled_sum):
tests/integration/test_t1_tune.py with the GPU present, then a full brute-force tune of it
recorded in spaces/ of the output."""
import os
import subprocess
import sys

from . import ktune

SPEC = os.path.join("tests", "data", "t1", "scaled_sum", "scaled_sum_T1.json")


def run(context):
    print("== t1: tune --t1 on the GPU", flush=True)
    test = subprocess.run([sys.executable, os.path.join(context.root, "tests", "integration", "test_t1_tune.py"),
                           "--ktune", context.ktune, "--source-dir", context.root],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    print("\n".join(test.stdout.splitlines()[-25:]), flush=True)
    if test.returncode != 0:
        context.fail()
    rc = ktune.run(context.ktune, ["tune", "--t1", os.path.join(context.root, SPEC), "--strategy", "brute_force",
                                   "--budget", "100000", "--max-seconds-per-config", "0.02",
                                   "--db", context.path("t1.db"), "--record", context.out("spaces"), "--json"],
                   stdout=context.path("t1-tune.json"), stderr=context.path("t1-tune.err"))
    print(f"t1 brute force: exit {rc}", flush=True)
    s = ktune.tune_result(ktune.load_json(context.path("t1-tune.json")))
    try:
        print(s["space"]["valid"], "configs,", s["outcomes"], "best", s["best"]["config"], s["best"]["median_ns"], "ns",
              "default", (s["default"] or {}).get("median_ns"), flush=True)
    except (TypeError, KeyError):
        with open(context.path("t1-tune.err")) as f:
            print("".join(f.readlines()[-5:]), end="", flush=True)


def plan(context):
    print(f"== t1 plan: tests/integration/test_t1_tune.py, then brute force of {SPEC}")
