"""Measures chosen configs of chosen families with one or more ktune binaries on this machine,
so that two versions of a kernel source (one binary each) are compared on the same GPU in the
same run, config for config, with no search in between.

Each case is a JSON object {"kernel", "backend", "shape", "precision", "config"}; every binary
measures every case through `ktune tune --space PINNED --budget 1`, where PINNED is the family's
search space with each parameter pinned to the case's value (constraints still apply, so a
config the space forbids is reported, not measured).

    python3 -m ci.gpu.pinned_configs --ktune old=PATH --ktune new=PATH --cases cases.json --out DIR

Writes pinned-table.md (one row per case, one column per binary, median in us) and pinned.json
to DIR."""
import argparse
import json
import os
import subprocess
import tempfile

from . import narrow
from .families import ROOT
from .ktune import tune_result


def pinned_space(root, case):
    """The family's space pinned to the case's config (narrow.pinned keeps only the starting points
    that are that config)."""
    space = narrow.load(os.path.join(root, "search_spaces", f"{case['kernel']}.{case['backend']}.json"))
    try:
        return narrow.pinned(space, case["config"])
    except ValueError as e:
        raise SystemExit(f"case {case}: {e}")


def measure(binary, space_path, case, db):
    command = [binary, "tune", "--kernel", case["kernel"], "--backend", case["backend"], "--shape", case["shape"],
               "--precision", case["precision"], "--space", space_path, "--budget", "1", "--db", db, "--no-export",
               "--json"]
    result = subprocess.run(command, capture_output=True, text=True, timeout=300)
    if result.returncode != 0:
        return {"error": result.stderr.strip()[-400:]}
    summary = tune_result(json.loads(result.stdout))
    best = summary.get("best") or {}
    return {"median_ns": best.get("median_ns"), "bytes_per_second": best.get("bytes_per_second"),
            "outcomes": summary.get("outcomes")}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ktune", action="append", required=True, help="NAME=PATH of a ktune binary")
    parser.add_argument("--cases", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    root = ROOT
    binaries = [entry.split("=", 1) for entry in args.ktune]
    with open(args.cases) as f:
        cases = json.load(f)
    os.makedirs(args.out, exist_ok=True)
    rows = []
    with tempfile.TemporaryDirectory() as scratch, open(os.path.join(args.out, "pinned-progress.log"), "a") as log:
        for index, case in enumerate(cases):
            space_path = os.path.join(scratch, f"case{index}.json")
            with open(space_path, "w") as f:
                json.dump(pinned_space(root, case), f)
            row = {"case": case, "results": {}}
            for name, binary in binaries:
                # A database per binary: each must measure, never reuse the other's result.
                row["results"][name] = measure(binary, space_path, case, os.path.join(args.out, f"pinned-{name}.db"))
            rows.append(row)
            print(json.dumps(row), file=log, flush=True)
    names = [name for name, _ in binaries]
    lines = ["| family | backend | precision | config | " + " | ".join(f"{n} (us)" for n in names) + " |",
             "|---|---|---|---|" + "---:|" * len(names)]
    for row in rows:
        case = row["case"]
        cells = []
        for name in names:
            r = row["results"][name]
            cells.append(f"{r['median_ns'] / 1e3:.1f}" if r.get("median_ns") else (r.get("error") or str(r))[:60])
        config = ",".join(f"{k}={v}" for k, v in case["config"].items())
        lines.append(f"| {case['kernel']} | {case['backend']} | {case['precision']} | {config} | " + " | ".join(cells) + " |")
    text = "\n".join(lines) + "\n"
    with open(os.path.join(args.out, "pinned-table.md"), "w") as f:
        f.write(text)
    with open(os.path.join(args.out, "pinned.json"), "w") as f:
        json.dump(rows, f, indent=1)
    print(text)


if __name__ == "__main__":
    main()
