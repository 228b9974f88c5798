"""What the phases that set one ktune family against PyTorch in the same call share
(phase_instance_norm.py, phase_linear_residual.py): the baseline script's command line and JSON,
and the loop that runs the baselines, then one fresh tune per shape, and writes NAME.json and
NAME-table.md to the output."""
import json
import sys

from . import ktune
from .context import python_module


def baseline_main(argv, measure):
    """A baseline script's main: argv is PRECISION SHAPE...; prints {"device", "torch",
    "precision", "results": {SHAPE: measure(SHAPE, PRECISION)}}."""
    import torch
    precision, shapes = argv[0], argv[1:]
    results = {text: measure(text, precision) for text in shapes}
    print(json.dumps({"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "precision": precision,
                      "results": results}, indent=1))


def timed_cases(cases, timed):
    """{"<name>_ns": median} for each (name, fn), or "<name>_error" for one that cannot run."""
    result = {}
    for name, fn in cases:
        try:
            result[f"{name}_ns"] = timed(fn)
        except Exception as e:  # a baseline that cannot run is recorded, not fatal
            result[f"{name}_error"] = f"{type(e).__name__}: {e}"[:300]
    return result


def run(context, name, baseline_module, shapes, precision, seconds, kernel, shape_arg, table):
    """The baselines of every shape, then a fresh `ktune tune -k kernel` per shape (shape_arg(text)
    is its --shape); table(rows, precision, device) makes the Markdown table."""
    print(f"== {name}: {len(shapes)} shapes, {precision}, {seconds:g} s each", flush=True)
    baseline_path = context.path(f"{name}-baselines.json")
    with open(baseline_path, "w") as out, open(context.path(f"{name}-baselines.err"), "w") as err:
        rc = python_module(baseline_module, precision, *shapes, stdout=out, stderr=err, timeout=400).returncode
    baselines = ktune.load_json(baseline_path) or {}
    if rc != 0:
        print(f"baselines: exit {rc}; see {name}-baselines.err", flush=True)
        context.fail()
    rows = []
    for text in shapes:
        result_path = context.path(f"{name}-{text}.json")
        rc = ktune.run(context.ktune, ktune.tune_args(kernel, "cuda", shape_arg(text), precision,
                                                      "--time-limit", str(seconds), "--db", context.path(f"{name}.db"),
                                                      "--no-export", "--json"),
                       stdout=result_path, stderr=context.path(f"{name}.err"), timeout=int(seconds) + 300,
                       interrupt=True)
        summary = ktune.tune_result(ktune.load_json(result_path)) or {}
        best = summary.get("best") or {}
        row = {"shape": text, "exit": rc, "configs": summary.get("evaluated", 0) + summary.get("reused", 0),
               "outcomes": summary.get("outcomes"), "ktune_ns": best.get("median_ns"),
               "config": json.dumps(best.get("config"), separators=(",", ":")) if best else None,
               "default_ns": (summary.get("default") or {}).get("median_ns"),
               "device_use": summary.get("device_use"),
               "baseline": (baselines.get("results") or {}).get(text, {})}
        rows.append(row)
        print(f"{text}: exit {rc}, {row['configs']} configs, best {row['ktune_ns']} ns, outcomes {row['outcomes']}",
              flush=True)
        if rc != 0 or not best:
            context.fail()
    device = baselines.get("device", "?")
    with open(context.out(f"{name}.json"), "w") as f:
        json.dump({"device": device, "torch": baselines.get("torch"), "precision": precision, "seconds": seconds,
                   "rows": rows}, f, indent=1)
    text = table(rows, precision, device)
    with open(context.out(f"{name}-table.md"), "w") as f:
        f.write(text)
    print(text, flush=True)
    return rows


if __name__ == "__main__":
    sys.exit("a helper of ci/gpu-check, not a command")
