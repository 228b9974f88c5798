#!/usr/bin/env python3
"""Derives each family's starting points (the "starting_points" of search_spaces/*.json) from
fully measured spaces: greedily, the config whose best-of-the-chosen is fastest across the
family's recorded spaces, measured as the share of each space's configs that beat it (0 = the
space's optimum; a config the space lacks counts as a random one, 0.5).

  ci/choose_starting_points.py [--count 4] [--leave-one-out] [--write] [--replay KTUNE] FOLDER_OR_CACHE...

Caches are ktune recordings named FAMILY.BACKEND.PROBLEM.PRECISION.json[.gz] (T4 files skipped).
--leave-one-out prints, for every space, where the points chosen from the family's other spaces
rank in it: the honest estimate of how they do on a space they were not chosen from.
--replay KTUNE scores --strategy (default auto) on each space (1 / 2 / 5% budgets) from scratch and from the
starting points chosen without it, with `ktune replay --starting-points`.
--write puts them into search_spaces/FAMILY.BACKEND.json as "starting_points" (parameters the
recordings lack take the space's default value; configs the space cannot hold are dropped)."""
import argparse
import bisect
import collections
import gzip
import json
import pathlib
import re
import subprocess
import sys
import tempfile

FRACTIONS = [0.01, 0.02, 0.05]

SPACES = pathlib.Path(__file__).resolve().parent.parent / "search_spaces"


def write_starting_points(family, backend, chosen, target=None):
    """Replaces (or adds, before "default") the space file's "starting_points", in place or in a
    copy at `target`; returns the file written, None when the family has no space file."""
    path = SPACES / f"{family}.{backend}.json"
    if not path.exists():
        return None
    text = path.read_text()
    space = json.loads(text)
    values = {p["name"]: p["values"] for p in space["parameters"]}
    default = space.get("default", {})
    points = []
    for config in chosen:
        point = {}
        for name in values:
            value = config.get(name, default.get(name))
            if value not in values[name]:
                break
            point[name] = value
        else:
            if all(name in values for name in config) and point not in points:
                points.append(point)
    block = '  "starting_points": [\n' + ",\n".join("    " + json.dumps(p) for p in points) + "\n  ],\n"
    text = re.sub(r'  "starting_points": \[\n.*?\n  \],\n', "", text, flags=re.S)
    text = text.replace('  "default":', block + '  "default":', 1)
    json.loads(text)  # still one valid document
    target = pathlib.Path(target) if target else path
    target.write_text(text)
    return target


def replay_scores(ktune, strategy, cache, repeats, starting_points_file=None):
    command = [ktune, "replay", "--cache", str(cache), "--strategy", strategy, "--repeats", str(repeats), "--json"]
    for fraction in FRACTIONS:
        command += ["--budget-fraction", str(fraction)]
    if starting_points_file:
        command += ["--starting-points", str(starting_points_file)]
    document = json.loads(subprocess.run(command, capture_output=True, text=True, check=True).stdout)
    return [next(r["score"] for r in document["results"] if r["budget"] == b)
            for b in sorted({r["budget"] for r in document["results"]})]


def leave_one_out_replay(ktune, strategy, repeats, families, count):
    """Scores at 1 / 2 / 5%, from scratch and from starting points chosen without the space."""
    print(f"\n`{strategy}`:\n\n| space | from scratch | from starting points chosen without it |\n|---|---|---|")
    sums = [[0.0] * len(FRACTIONS), [0.0] * len(FRACTIONS)]
    n = 0
    with tempfile.TemporaryDirectory() as folder:
        for (family, backend), spaces in sorted(families.items()):
            if len(spaces) < 2 or not (SPACES / f"{family}.{backend}.json").exists():
                continue
            for i, space in enumerate(spaces):
                chosen = choose(spaces[:i] + spaces[i + 1:], count)
                copy = write_starting_points(family, backend, as_dicts(chosen),
                                             pathlib.Path(folder) / f"{family}.{backend}.json")
                rows = [replay_scores(ktune, strategy, space["path"], repeats),
                        replay_scores(ktune, strategy, space["path"], repeats, copy)]
                for total, row in zip(sums, rows):
                    for k, score in enumerate(row):
                        total[k] += score
                n += 1
                print(f"| {space['name']} | " + " | ".join(" / ".join(f"{x:.2f}" for x in row) for row in rows) + " |")
    if n == 0:
        print("| (no family with two or more recorded spaces and a space file) | | |")
        return
    print(f"| **mean of {n}** | " + " | ".join(" / ".join(f"{x / n:.3f}" for x in total) for total in sums) + " |")


def as_dicts(chosen):
    """Chosen configs (tuples of (name, JSON value)) as the dicts a space file holds."""
    return [{p: json.loads(v) for p, v in c} for c in chosen]


def load(path):
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as f:
        return json.load(f)


def space_of(path):
    cache = load(path)
    params = cache["tune_params_keys"]
    times = {}
    for record in cache["cache"].values():
        t = record.get("time")
        if isinstance(t, (int, float)) and t > 0 and t < 1e20:
            times[tuple((p, json.dumps(record[p])) for p in params)] = float(t)
    ordered = sorted(times.values())
    return {"name": path.name, "path": path, "times": times, "ordered": ordered}


def share_faster(space, config):
    """The share of the space's configs strictly faster than `config`; 0.5 when it lacks it."""
    t = space["times"].get(config)
    if t is None:
        return 0.5
    return bisect.bisect_left(space["ordered"], t) / len(space["ordered"])


def best_of(space, chosen):
    return min([share_faster(space, c) for c in chosen], default=0.5)


def choose(spaces, count):
    candidates = set()
    for s in spaces:
        candidates.update(s["times"])
    chosen = []
    for _ in range(count):
        def cost(c):
            # Ties (a pick that improves no space further) go to the config best on its own.
            return (round(sum(best_of(s, chosen + [c]) for s in spaces) / len(spaces), 9),
                    sum(share_faster(s, c) for s in spaces))
        best = min(sorted(candidates - set(chosen)), key=cost, default=None)
        if best is None:
            break
        chosen.append(best)
    return chosen


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--count", type=int, default=4)
    parser.add_argument("--leave-one-out", action="store_true")
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--replay", metavar="KTUNE",
                        help="score --strategy with `KTUNE replay` on every space, from scratch and from the "
                             "starting points chosen without that space (leave one out)")
    parser.add_argument("--strategy", default="auto", help="with --replay (default: auto, ktune's default)")
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("paths", nargs="+")
    args = parser.parse_args()
    files = []
    for p in map(pathlib.Path, args.paths):
        files += sorted(p.glob("*.json*")) if p.is_dir() else [p]
    families = collections.defaultdict(list)
    for f in files:
        if "_T4" in f.name:
            continue
        parts = f.name.split(".")
        if len(parts) < 4:
            continue
        families[(parts[0], parts[1])].append(space_of(f))
    for (family, backend), spaces in sorted(families.items()):
        chosen = choose(spaces, args.count)
        print(f"== {family}.{backend}: {len(spaces)} spaces")
        print(json.dumps(as_dicts(chosen)))
        for s in spaces:
            print(f"   {s['name']}: " + " ".join(f"{share_faster(s, c):.3f}" for c in chosen))
        if args.write:
            written = write_starting_points(family, backend, as_dicts(chosen))
            print(f"   written to {written}" if written else "   (no ktune space file: not written)")
        if args.leave_one_out and len(spaces) > 1:
            for i, s in enumerate(spaces):
                others = choose(spaces[:i] + spaces[i + 1:], args.count)
                print(f"   left out {s['name']}: " + " ".join(f"{share_faster(s, c):.3f}" for c in others))
    if args.replay:
        leave_one_out_replay(args.replay, args.strategy, args.repeats, families, args.count)
    return 0


if __name__ == "__main__":
    sys.exit(main())
