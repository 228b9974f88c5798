"""The table of ci/gpu-mpi-check: each run (--devices all in one process, one rank per GPU, and
one rank killed mid-run) with its configs, outcomes, wall time, evaluations per second and lost
ranks; it checks that every run completed the budget, all ok, and that the kill lost one rank.
Exits 1 when a check fails.

Usage: python3 -m ci.gpu.table_mpi WORK BUDGET"""
import json
import sqlite3
import sys

from .ktune import tune_result


def main(out, budget):
    print("| run | devices | configs | outcomes | wall s | evals/s | lost |")
    print("|---|---|---:|---|---:|---:|---|")
    ok = True
    for label in ("devices", "ranks", "kill"):
        try:
            s = tune_result(json.load(open(f"{out}/mpi-{label}.json")))
        except Exception as e:
            print(f"| {label} | no JSON: {e} | | | | | |")
            ok = False
            continue
        rows = sqlite3.connect(f"{out}/mpi-{label}.db").execute(
            "select count(*), count(distinct config) from measurements").fetchone()
        print(f"| {label} | {', '.join(s['devices'])} | {s['evaluated']} | {s['outcomes']} | {s['seconds']:.1f} | "
              f"{s['evaluated'] / s['seconds']:.2f} | {'; '.join(s.get('lost', [])) or '-'} |")
        ok &= s["evaluated"] == budget and rows == (budget, budget) and set(s["outcomes"]) == {"ok"}
        if label == "kill":
            ok &= len(s.get("lost", [])) == 1
    print()
    print("all checks passed" if ok else "CHECK FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], int(sys.argv[2])))
