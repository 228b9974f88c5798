"""The table of ci/gpu-check scaling: for each `ktune tune --devices` run (its JSON summary and
the database beside it, scaling-gpusN.db), the configs measured, wall time, evaluations per
second (end to end, and steady: between the first and the last result), the speed-up over the
one-GPU run, and when the run first held a config within 2% of the best of its configs.

Usage: python3 -m ci.gpu.table_scaling WORK_DIR scaling-gpus1.json scaling-gpus2.json ..."""
import json
import os
import sqlite3
import sys

from .ktune import tune_result


def run_figures(work, path):
    summary = tune_result(json.load(open(os.path.join(work, path))))
    db = os.path.join(work, path.replace(".json", ".db"))
    rows = sqlite3.connect(db).execute(
        "SELECT json_extract(environment, '$.tune_seconds'), outcome, median_ns FROM measurements").fetchall()
    rows.sort(key=lambda r: r[0])
    landed = [r[0] for r in rows]
    ok = [(t, ns) for t, outcome, ns in rows if outcome == "ok"]
    best = min(ns for _, ns in ok)
    reached = next(t for t, ns in ok if ns <= 1.02 * best)
    steady = (len(landed) - 1) / (landed[-1] - landed[0]) if len(landed) > 1 and landed[-1] > landed[0] else 0
    return {"gpus": len(summary["devices"]), "evaluated": summary["evaluated"], "seconds": summary["seconds"],
            "rate": summary["evaluated"] / summary["seconds"], "steady": steady, "reached": reached,
            "best_us": best / 1e3, "outcomes": summary["outcomes"]}


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    work, paths = argv[0], argv[1:]
    runs = [run_figures(work, p) for p in paths]
    base = runs[0]
    print("| GPUs | configs | wall s | evals/s | speed-up | efficiency | steady evals/s | steady speed-up "
          "| s to within 2% of best | best us | outcomes |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for r in runs:
        speedup = r["rate"] / base["rate"]
        steady_speedup = r["steady"] / base["steady"] if base["steady"] else 0
        outcomes = ", ".join(f"{k} {v}" for k, v in sorted(r["outcomes"].items()))
        print(f"| {r['gpus']} | {r['evaluated']} | {r['seconds']:.1f} | {r['rate']:.2f} | {speedup:.2f}x | "
              f"{speedup / r['gpus'] * 100:.0f}% | {r['steady']:.2f} | {steady_speedup:.2f}x | {r['reached']:.1f} | "
              f"{r['best_us']:.1f} | {outcomes} |")


if __name__ == "__main__":
    main()
