"""The table of ci/gpu-first-tune: for each space, what a first tune with a budget of 2% found
against the optimum of the same space brute-forced afterwards in the same database, and the rank
of what it found among every config measured.

Usage: python3 -m ci.gpu.table_first_tune OUT WORK   (OUT: the tunes' JSON; WORK: their databases)"""
import glob
import json
import os
import sqlite3
import sys

from .ktune import tune_result


def main(out, work):
    print("| kernel | shape | configs | budget | strategy | prior configs valid here | best found (us) | optimum (us) | found / optimum | rank of found |")
    print("|---|---|---:|---:|---|---:|---:|---:|---:|---:|")
    for first_file in sorted(glob.glob(os.path.join(out, "*.first.json"))):
        label = os.path.basename(first_file)[: -len(".first.json")]
        with sqlite3.connect(os.path.join(work, label + ".db")) as c:
            first = tune_result(json.load(open(first_file)))
            brute = tune_result(json.load(open(first_file.replace(".first.json", ".brute.json"))))
            found, best = first["best"]["median_ns"], brute["best"]["median_ns"]
            run = brute["run_id"]
            times = sorted(t for (t,) in c.execute(
                "SELECT median_ns FROM measurements WHERE outcome = 'ok' AND "
                "kernel_id = (SELECT kernel_id FROM runs WHERE id = ?) AND problem_id = (SELECT problem_id FROM runs WHERE id = ?)",
                (run, run)))
            rank = 1 + sum(1 for t in times if t < found)
            shape = ",".join(f"{k}={v}" for k, v in first["problem"].items() if k != "precision")
            print(f"| {first['kernel']} | {shape} {first['problem']['precision']} | {brute['space']['valid']} | "
                  f"{first['evaluated'] + first['reused']} | {first['strategy']} | {first['prior_configs_valid']} | "
                  f"{found / 1e3:.1f} | {best / 1e3:.1f} | {found / best:.3f} | {rank} of {len(times)} |")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
