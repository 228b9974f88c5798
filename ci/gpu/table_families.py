"""Turns ci/gpu-check's bench and suite outputs into the markdown tables kept in
reports/benchmarks.md.

  python3 -m ci.gpu.table_families DIR
      bench phase: DIR/tune-<kernel>.json (one shape) against DIR/baselines.json.
  python3 -m ci.gpu.table_families suite PATH [PATH ...] [--bundle FILE] [--progress LOG]
      suite phase: every DIR/suite-<kernel>-<rows>x<cols>.json (ktune tune --json) against
      DIR/suite-baselines-<rows>x<cols>.json (baseline_families.py ROWS COLS) of the same shape. A
      PATH is a folder or a bundle written by --bundle (so the table can be remade from the one
      file that comes back); later PATHs override earlier ones file by file. --bundle FILE
      writes every suite file read (and the text of --progress LOG) into one JSON file:
      {"kind": "ktune-gpu-suite", "files": {name: parsed JSON or null}, "progress": text}.
"""
import builtins
import functools
import glob
import io
import json
import math
import os
import re
import sys

from .ktune import tune_result


def printer(stream):
    """print, writing to `stream` (default standard output): the tables print to a file in-process."""
    return functools.partial(builtins.print, file=stream or sys.stdout)


def fmt(v, digits=2, suffix=""):
    return f"{v:.{digits}f}{suffix}" if v else "-"


def fmt_tb(v):
    """TB/s with two decimals, or three significant digits below 0.1 (one-row shapes)."""
    return "-" if not v else (f"{v:.2f}" if v >= 0.1 else f"{v:.3g}")


def torch_numbers(baselines, kernel):
    """(eager TB/s, compile TB/s, best TB/s, which) from a baselines "results" dict."""
    def tb(name):
        entry = baselines.get(name)
        return entry.get("tb_s") if isinstance(entry, dict) else None
    eager, compiled = tb(f"{kernel}_eager"), tb(f"{kernel}_compile")
    candidates = [(v, k) for v, k in ((eager, "eager"), (compiled, "compile")) if v]
    best, which = max(candidates) if candidates else (None, None)
    return eager, compiled, best, which


def bench_report(out, stream=None):
    print = printer(stream)
    def load(name):
        try:
            with open(os.path.join(out, name)) as f:
                return json.load(f)
        except (OSError, ValueError):
            return None
    document = load("baselines.json") or {}
    baselines = document.get("results", {})
    shape = f"{document.get('rows', 16384)}x{document.get('cols', 4096)}"
    copy = baselines.get("copy", {}).get("tb_s")
    print(f"\nsame-sized copy ({shape} bf16, read + write): {copy and round(copy, 3)} TB/s; "
          f"1 GiB copy: {baselines.get('copy_1GiB', {}).get('tb_s') and round(baselines['copy_1GiB']['tb_s'], 3)} TB/s\n")
    print("| kernel | tuned config | tuned | TB/s | % of copy | PyTorch eager | torch.compile | tuned / best PyTorch | default | tuned / default | configs |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for path in sorted(glob.glob(os.path.join(out, "tune-*.json"))):
        s = load(os.path.basename(path))
        if not s or not s.get("best"):
            print(f"| {os.path.basename(path)} | no result | | | | | | | | | |")
            continue
        kernel = s["kernel"]
        best, default = s["best"], s.get("default")
        tb = best["bytes_per_second"] / 1e12
        eager, compiled, torch_best, _ = torch_numbers(baselines, kernel)
        config = " ".join(f"{k}={v}" for k, v in best["config"].items())
        print(f"| {kernel} | {config} | {best['median_ns'] / 1e3:.1f} us | {tb:.2f} | "
              f"{100 * tb / copy if copy else 0:.0f}% | {fmt(eager)} | {fmt(compiled)} | "
              f"{tb / torch_best if torch_best else 0:.2f}x | "
              f"{default['bytes_per_second'] / 1e12 if default else 0:.2f} TB/s | "
              f"{default['median_ns'] / best['median_ns'] if default else 0:.2f}x | "
              f"{s['evaluated'] + s['reused']} of {s['space']['valid']} |")


# ---- suite ------------------------------------------------------------------------------------

SUITE_FILE = re.compile(r"^suite-(?P<kernel>[A-Za-z0-9_]+)-(?P<rows>\d+)x(?P<cols>\d+)\.json$")


def load_suite(paths):
    """{file name: parsed JSON or None} over folders and bundles, later paths winning."""
    files, progress = {}, []
    for path in paths:
        if os.path.isdir(path):
            for name in sorted(os.listdir(path)):
                if not SUITE_FILE.match(name):
                    continue
                try:
                    with open(os.path.join(path, name)) as f:
                        files[name] = tune_result(json.load(f))
                except (OSError, ValueError):
                    files[name] = None  # ktune or PyTorch died before writing its JSON
        else:
            with open(path) as f:
                bundle = json.load(f)
            files.update({k: tune_result(v) for k, v in bundle.get("files", {}).items() if SUITE_FILE.match(k)})
            if bundle.get("progress"):
                progress.append(bundle["progress"])
    return files, progress


def geomean(values):
    values = [v for v in values if v and v > 0]
    return (math.exp(sum(math.log(v) for v in values) / len(values)), len(values)) if values else (None, 0)


def suite_rows(files):
    """One dict per (family, shape) with the numbers of the table, plus the per-shape baselines."""
    baselines, tunes = {}, {}
    for name, document in files.items():
        m = SUITE_FILE.match(name)
        shape = (int(m["rows"]), int(m["cols"]))
        if m["kernel"] == "baselines":
            baselines[shape] = document or {}
        else:
            tunes[(m["kernel"], shape)] = document
    shapes = sorted(set(baselines) | {shape for _, shape in tunes}, key=lambda s: (s[1], s[0]))
    families = sorted({kernel for kernel, _ in tunes})
    rows = []
    for kernel in families:
        for shape in shapes:
            row = {"kernel": kernel, "rows": shape[0], "cols": shape[1]}
            results = (baselines.get(shape) or {}).get("results", {})
            copy = results.get("copy", {}).get("tb_s") if isinstance(results.get("copy"), dict) else None
            _, _, torch_best, which = torch_numbers(results, kernel)
            row.update(copy_tb_s=copy, torch_tb_s=torch_best, torch_which=which,
                       torch_error=results.get(f"{kernel}_compile_error") or results.get(f"{kernel}_error"))
            if (kernel, shape) not in tunes:
                row["status"] = "not run"
            else:
                s = tunes[(kernel, shape)]
                if not s or not s.get("best"):
                    why = s and (s.get("outcomes") or s.get("error"))
                    row["status"] = f"no result ({str(why)[:100]})" if why else "no result"
                else:
                    best, default = s["best"], s.get("default")
                    tb = best["bytes_per_second"] / 1e12
                    row.update(status="ok", tuned_us=best["median_ns"] / 1e3, tuned_tb_s=tb,
                               config=best["config"],
                               default_tb_s=default["bytes_per_second"] / 1e12 if default else None,
                               tuned_over_default=default["median_ns"] / best["median_ns"] if default else None,
                               tuned_over_copy=tb / copy if copy else None,
                               tuned_over_torch=tb / torch_best if torch_best else None)
                if s and "evaluated" in s:
                    row.update(evaluated=s.get("evaluated", 0) + s.get("reused", 0),
                               valid=(s.get("space") or {}).get("valid"), seconds=s.get("seconds"),
                               stop_reason=s.get("stop_reason"))
            rows.append(row)
    return rows, baselines, shapes, families


def shape_label(rows, cols):
    return f"{rows}x{cols}"


def suite_report(files, stream=None):
    print = printer(stream)
    rows, baselines, shapes, families = suite_rows(files)
    any_baseline = next((b for b in baselines.values() if b), {})
    print(f"\nktune suite, bf16, shape = tokens x hidden (rows x cols; rmsnorm_rope: heads = cols / 128, "
          f"head_dim = 128). Device: {any_baseline.get('device', '?')}; PyTorch {any_baseline.get('torch', '?')}.")
    print("Copy = a same-sized rows x cols bf16 device-to-device copy (read + write) in the same run; "
          "PyTorch = the better of eager and torch.compile; tuned / default = default time / tuned time.\n")
    copies = []
    for shape in shapes:
        results = (baselines.get(shape) or {}).get("results", {})
        copy = results.get("copy", {}).get("tb_s") if isinstance(results.get("copy"), dict) else None
        copies.append(f"{shape_label(*shape)} {fmt_tb(copy)}")
    print("copy TB/s by shape: " + ", ".join(copies) + "\n")

    print("| family | shape | tuned | tuned TB/s | % of copy | best PyTorch TB/s | tuned / best PyTorch "
          "| default TB/s | tuned / default | configs |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        label = shape_label(r["rows"], r["cols"])
        configs = f"{r['evaluated']} of {r['valid']}" if "evaluated" in r else "-"
        torch_cell = f"{fmt_tb(r['torch_tb_s'])} ({r['torch_which']})" if r["torch_tb_s"] else "-"
        if r["status"] != "ok":
            print(f"| {r['kernel']} | {label} | {r['status']} | | | {torch_cell} | | | | {configs} |")
            continue
        copy_pct = f"{100 * r['tuned_over_copy']:.0f}%" if r["tuned_over_copy"] else "-"
        print(f"| {r['kernel']} | {label} | {r['tuned_us']:.1f} us | {fmt_tb(r['tuned_tb_s'])} | {copy_pct} | "
              f"{torch_cell} | {fmt(r['tuned_over_torch'], suffix='x')} | {fmt_tb(r['default_tb_s'])} | "
              f"{fmt(r['tuned_over_default'], suffix='x')} | {configs} |")

    print("\nGeometric means over the shapes each family has (n = shapes with both numbers):\n")
    for kernel in families:
        mine = [r for r in rows if r["kernel"] == kernel and r["status"] == "ok"]
        parts = []
        for key, label, pct in (("tuned_over_copy", "tuned / copy", True),
                                ("tuned_over_torch", "tuned / PyTorch", False),
                                ("tuned_over_default", "tuned / default", False)):
            g, n = geomean([r.get(key) for r in mine])
            value = "-" if g is None else (f"{100 * g:.0f}%" if pct else f"{g:.2f}x")
            parts.append(f"{label} {value} (n={n})")
        print(f"- {kernel}: " + ", ".join(parts))

    for key, title, pct in (("tuned_over_default", "tuned / default by shape", False),
                            ("tuned_over_torch", "tuned / best PyTorch by shape", False),
                            ("tuned_over_copy", "tuned, % of same-shape copy", True)):
        print(f"\n{title}:\n")
        print("| family | " + " | ".join(shape_label(*s) for s in shapes) + " |")
        print("|---|" + "---|" * len(shapes))
        for kernel in families:
            cells = []
            for shape in shapes:
                r = next(r for r in rows if r["kernel"] == kernel and (r["rows"], r["cols"]) == shape)
                v = r.get(key)
                cells.append("-" if not v else (f"{100 * v:.0f}%" if pct else f"{v:.2f}x"))
            print(f"| {kernel} | " + " | ".join(cells) + " |")

    problems = [f"{r['kernel']} {shape_label(r['rows'], r['cols'])}: {r['status']}" for r in rows if r["status"] != "ok"]
    errors = [f"{r['kernel']} {shape_label(r['rows'], r['cols'])}: {r['torch_error']}" for r in rows if r.get("torch_error")]
    if problems:
        print("\nNo tuned result: " + "; ".join(problems))
    if errors:
        print("\nPyTorch baseline errors: " + "; ".join(errors))


def bench_text(out):
    """The bench table of the folder `out`, as text."""
    stream = io.StringIO()
    bench_report(out, stream)
    return stream.getvalue()


def suite_main(args, out=None):
    """The suite table of PATH ... [--bundle FILE] [--progress LOG], printed to `out`."""
    paths, bundle, progress_file = [], None, None
    rest = list(args)
    while rest:
        arg = rest.pop(0)
        if arg == "--bundle" and rest:
            bundle = rest.pop(0)
        elif arg == "--progress" and rest:
            progress_file = rest.pop(0)
        else:
            paths.append(arg)
    if not paths:
        sys.exit("usage: python3 -m ci.gpu.table_families suite PATH [PATH ...] [--bundle FILE] [--progress LOG]")
    files, progress = load_suite(paths)
    if progress_file:
        try:
            with open(progress_file) as f:
                progress.append(f.read())
        except OSError:
            pass
    suite_report(files, out)
    if bundle:
        with open(bundle + ".tmp", "w") as f:
            json.dump({"kind": "ktune-gpu-suite", "files": files, "progress": "".join(progress)}, f)
        os.replace(bundle + ".tmp", bundle)


def main(argv):
    if len(argv) >= 2 and argv[1] == "suite":
        suite_main(argv[2:])
        return
    if len(argv) != 2:
        sys.exit(__doc__)
    bench_report(argv[1])


if __name__ == "__main__":
    main(sys.argv)
