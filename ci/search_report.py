#!/usr/bin/env python3
"""Scores every search strategy on recorded spaces with `ktune replay` and prints the tables of
reports/search.md: mean score (and standard error) per strategy at budgets of 1%, 2% and 5% of
each space, then the mean over spaces per strategy and budget.

    ci/search_report.py --ktune build/ci/ktune --repeats 30 SPACE.json.gz ... > tables.md

Each space is a Kernel Tuner cache or T4 results of a fully measured space."""
import argparse
import json
import math
import os
import subprocess
import sys

STRATEGIES = ["random", "annealing", "genetic", "differential_evolution", "tpe", "forest"]
FRACTIONS = [0.01, 0.02, 0.05]


def replay(ktune, space, repeats):
    command = [ktune, "replay", "--cache", space, "--repeats", str(repeats), "--json"]
    for strategy in STRATEGIES:
        command += ["--strategy", strategy]
    for fraction in FRACTIONS:
        command += ["--budget-fraction", str(fraction)]
    result = subprocess.run(command, capture_output=True, text=True, check=True)
    return json.loads(result.stdout)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ktune", required=True)
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("spaces", nargs="+")
    args = parser.parse_args()

    means = {}  # (strategy, fraction index) -> [score per space]
    for space in args.spaces:
        document = replay(args.ktune, space, args.repeats)
        name = os.path.basename(space)
        print(f"### {name}\n")
        print(f"{document['kernel'] or name} on {document['device'] or 'an unnamed device'}: "
              f"{document['configs']} configs, {args.repeats} repeats per cell (seeds 1-{args.repeats})\n")
        budgets = sorted({r["budget"] for r in document["results"]})
        print("| strategy | " + " | ".join(f"{b} evals ({f:.0%})" for b, f in zip(budgets, FRACTIONS)) + " |")
        print("|---|" + "---:|" * len(budgets))
        for strategy in STRATEGIES:
            cells = []
            for k, budget in enumerate(budgets):
                row = next(r for r in document["results"] if r["strategy"] == strategy and r["budget"] == budget)
                error = row["stddev_score"] / math.sqrt(args.repeats)
                cells.append(f"{row['score']:.2f} ± {error:.2f}")
                means.setdefault((strategy, k), []).append(row["score"])
            print(f"| {strategy} | " + " | ".join(cells) + " |")
        print()
    print("### Mean score over these spaces\n")
    print("| strategy | " + " | ".join(f"{f:.0%} budget" for f in FRACTIONS) + " | mean |")
    print("|---|" + "---:|" * (len(FRACTIONS) + 1))
    for strategy in STRATEGIES:
        cells = [sum(means[(strategy, k)]) / len(means[(strategy, k)]) for k in range(len(FRACTIONS))]
        print(f"| {strategy} | " + " | ".join(f"{c:.3f}" for c in cells) + f" | {sum(cells) / len(cells):.3f} |")
    print()


if __name__ == "__main__":
    sys.exit(main())
