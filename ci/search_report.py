#!/usr/bin/env python3
"""Scores every search strategy on recorded spaces with `ktune replay` and prints the tables of
reports/search.md: mean score (and standard error) per strategy at budgets of 1%, 2% and 5% of
each space, then the mean over spaces per strategy and budget.

    ci/search_report.py --ktune build/ci/ktune --repeats 30 SPACE.json.gz ... > tables.md

Each space is a Kernel Tuner cache or T4 results of a fully measured space.

Transfer (leave one out within kernel families): with --prior-from-family, every space whose
kernel has other recorded spaces is replayed with `forest` and `tpe`, each without a prior and
with `--prior` set to the other spaces of its kernel; the tables are per space and per group
(held-out spaces: those under a folder named heldout-*). With --unrelated the prior is instead
every space of the other kernels (a sanity check: it must not make things much worse); with
--all-kernels it is every other space, those of its own kernel first (`ktune tune`'s rule).

    ci/search_report.py --ktune build/ci/ktune --prior-from-family \
        shared/data/kernel_tuner_caches reports/h200-search/spaces reports/h100-search/spaces \
        reports/h100-search/heldout-2026-11-25 > transfer.md

With --starting-points, every replay of a space recorded by ktune (FAMILY.BACKEND.*.json.gz) also
takes the starting points of search_spaces/FAMILY.BACKEND.json, after any prior: how `ktune tune`
begins with an empty database ("no prior" rows) or with one ("prior" rows); --default-first also
measures the family's default first in every run, within the budget, exactly as `ktune tune` does.

A folder stands for its *.json.gz spaces, without the *_T4.json.gz copy of a space it also
holds as a Kernel Tuner cache."""
import argparse
import json
import math
import os
import subprocess
import sys

STRATEGIES = ["random", "annealing", "genetic", "differential_evolution", "tpe", "forest"]
FRACTIONS = [0.01, 0.02, 0.05]
SPACES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "search_spaces")
USE_STARTING_POINTS = False
DEFAULT_FIRST = False


def starting_points_arguments(space):
    """--starting-points FILE for a space ktune recorded, when its family's space file exists."""
    if not USE_STARTING_POINTS:
        return []
    parts = os.path.basename(space).split(".")
    family_space = os.path.join(SPACES, f"{parts[0]}.{parts[1]}.json") if len(parts) > 3 else ""
    if not (family_space and os.path.exists(family_space)):
        return []
    return ["--starting-points", family_space] + (["--default-first"] if DEFAULT_FIRST else [])


def replay(ktune, space, repeats):
    command = [ktune, "replay", "--cache", space, "--repeats", str(repeats), "--json"]
    command += starting_points_arguments(space)
    for strategy in STRATEGIES:
        command += ["--strategy", strategy]
    for fraction in FRACTIONS:
        command += ["--budget-fraction", str(fraction)]
    result = subprocess.run(command, capture_output=True, text=True, check=True)
    return json.loads(result.stdout)


def space_files(paths):
    files = []
    for path in paths:
        if not os.path.isdir(path):
            files.append(path)
            continue
        names = sorted(n for n in os.listdir(path) if n.endswith(".json.gz"))
        for name in names:
            if name.endswith("_T4.json.gz") and name[: -len("_T4.json.gz")] + ".json.gz" in names:
                continue
            files.append(os.path.join(path, name))
    return files


def kernel_of(ktune, space):
    result = subprocess.run([ktune, "replay", "--cache", space, "--budget", "1", "--repeats", "1", "--json"],
                            capture_output=True, text=True, check=True)
    return json.loads(result.stdout)["kernel"]


TRANSFER_ROWS = [("forest", False), ("forest", True), ("tpe", False), ("tpe", True)]


def transfer_replay(ktune, space, priors, strategy, repeats):
    command = [ktune, "replay", "--cache", space, "--repeats", str(repeats), "--json", "--strategy", strategy]
    command += starting_points_arguments(space)
    for prior in priors:
        command += ["--prior", prior]
    for fraction in FRACTIONS:
        command += ["--budget-fraction", str(fraction)]
    return json.loads(subprocess.run(command, capture_output=True, text=True, check=True).stdout)


def transfer_report(args):
    files = space_files(args.spaces)
    kernels = {space: kernel_of(args.ktune, space) for space in files}
    groups = {}  # group -> (row, fraction index) -> [score per space]
    for space in files:
        if args.unrelated:
            priors = [other for other in files if kernels[other] != kernels[space]]
        elif args.all_kernels:  # as `ktune tune` does: its own kernel's spaces first (replay orders them)
            priors = [other for other in files if other != space]
        else:
            priors = [other for other in files if other != space and kernels[other] == kernels[space]]
        if not priors or (args.only and not any(text in space for text in args.only)):
            continue
        group = "held-out" if "heldout" in space else "development"
        print(f"### {os.path.basename(space)}\n")
        cells_by_row = {}
        for strategy, with_prior in TRANSFER_ROWS:
            document = transfer_replay(args.ktune, space, priors if with_prior else [], strategy, args.repeats)
            budgets = sorted({r["budget"] for r in document["results"]})
            cells = []
            for k, budget in enumerate(budgets):
                row = next(r for r in document["results"] if r["budget"] == budget)
                error = row["stddev_score"] / math.sqrt(args.repeats)
                cells.append(f"{row['score']:.2f} ± {error:.2f}")
                for g in (group, "all"):
                    groups.setdefault(g, {}).setdefault(((strategy, with_prior), k), []).append(row["score"])
            cells_by_row[(strategy, with_prior)] = cells
            if with_prior:
                valid = document["prior_configs_valid"]
        print(f"{kernels[space]} on {document['device']}: {document['configs']} configs; prior: "
              f"{len(priors)} spaces, {valid} of their {document['prior_configs']} configs valid here; "
              f"{args.repeats} repeats per cell\n")
        print("| strategy | prior | " + " | ".join(f"{b} evals ({f:.0%})" for b, f in zip(budgets, FRACTIONS)) + " |")
        print("|---|---|" + "---:|" * len(budgets))
        for strategy, with_prior in TRANSFER_ROWS:
            print(f"| {strategy} | {'yes' if with_prior else 'no'} | " + " | ".join(cells_by_row[(strategy, with_prior)]) + " |")
        print()
    print("### Mean score per group\n")
    print("| group | spaces | strategy | prior | " + " | ".join(f"{f:.0%}" for f in FRACTIONS) + " |")
    print("|---|---:|---|---|" + "---:|" * len(FRACTIONS))
    for g in ("development", "held-out", "all"):
        if g not in groups:
            continue
        for strategy, with_prior in TRANSFER_ROWS:
            scores = [groups[g][((strategy, with_prior), k)] for k in range(len(FRACTIONS))]
            print(f"| {g} | {len(scores[0])} | {strategy} | {'yes' if with_prior else 'no'} | " +
                  " | ".join(f"{sum(c) / len(c):.3f}" for c in scores) + " |")
    print()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ktune", required=True)
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--prior-from-family", action="store_true",
                        help="transfer tables: each space with the other spaces of its kernel as prior")
    parser.add_argument("--all-kernels", action="store_true",
                        help="with --prior-from-family: the prior is every other space, its own kernel's "
                             "first and then the other kernels' (what `ktune tune` takes from its database)")
    parser.add_argument("--unrelated", action="store_true",
                        help="with --prior-from-family: the prior is every space of the other kernels")
    parser.add_argument("--only", action="append", default=[],
                        help="with --prior-from-family: score only the spaces whose path holds this text "
                             "(repeatable)")
    parser.add_argument("--starting-points", action="store_true",
                        help="replay spaces ktune recorded with their family's starting points, after any prior")
    parser.add_argument("--default-first", action="store_true",
                        help="with --starting-points: each run measures the family's default first, within "
                             "the budget, as `ktune tune` does")
    parser.add_argument("spaces", nargs="+", help="spaces, or folders of them")
    args = parser.parse_args()
    global USE_STARTING_POINTS, DEFAULT_FIRST
    USE_STARTING_POINTS = args.starting_points
    DEFAULT_FIRST = args.default_first
    if args.prior_from_family:
        return transfer_report(args)

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
