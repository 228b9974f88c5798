"""What the phases that set one ktune family against PyTorch in the same call share
(phase_instance_norm.py, phase_linear_residual.py, phase_layernorm_linear.py, phase_ffn.py): their
settings, the baseline script's command line and JSON, the check tunes that come first, the loop
that runs the baselines, then one fresh tune per shape, and writes NAME.json and NAME-table.md to
the output, and the table of the GEMM-shaped families."""
import json
import sys

from . import judge, ktune
from .context import python_module


def settings(context, prefix, shapes):
    """(shapes, precision, seconds): KTUNE_<prefix>_SHAPES (default `shapes`, space-separated),
    KTUNE_<prefix>_PRECISION (default bf16) and the phase's SECONDS (default 20)."""
    return (context.environ.get(f"KTUNE_{prefix}_SHAPES", shapes).split(),
            context.environ.get(f"KTUNE_{prefix}_PRECISION", "bf16"), context.seconds(20))


def baseline_main(argv, measure):
    """A baseline script's main: argv is PRECISION SHAPE...; prints {"device", "torch",
    "precision", "results": {SHAPE: measure(SHAPE, PRECISION)}}."""
    import torch
    precision, shapes = argv[0], argv[1:]
    results = {text: measure(text, precision) for text in shapes}
    print(json.dumps({"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "precision": precision,
                      "results": results}, indent=1))


def graphed(fn):
    """fn captured in a CUDA graph (after a few warm-up calls on a side stream, as PyTorch asks):
    the replay launches everything fn launches at once, so PyTorch's host time per call is not
    what is measured."""
    import torch
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fn()
    return graph.replay


def best_pytorch(baseline):
    """The fastest PyTorch route of a baseline: eager, eager in a CUDA graph, torch.compile."""
    times = [baseline.get(k) for k in ("eager_ns", "eager_graph_ns", "compiled_ns")]
    return min([t for t in times if isinstance(t, (int, float))], default=None)


def cell(value, spec):
    """A table cell: the number formatted, "-" for a missing one."""
    return format(value, spec) if isinstance(value, (int, float)) else "-"


def us(ns):
    """ns in microseconds, None when missing or 0."""
    return ns / 1e3 if isinstance(ns, (int, float)) and ns else None


def ratio(a, b):
    """a / b, None unless both are numbers and b is not 0."""
    return a / b if isinstance(a, (int, float)) and isinstance(b, (int, float)) and b else None


def gemm_table(rows, title, shape_label, gemm_label):
    """The Markdown table of a GEMM-shaped family against PyTorch (linear_residual,
    layernorm_linear, ffn): per shape ktune's time, each PyTorch route's, the best route over
    ktune's, and the GEMMs alone (baseline key gemm_only_ns) for reference."""
    lines = [title, "",
             f"| {shape_label} | configs | ktune us | eager us | eager in a CUDA graph us | torch.compile us | "
             f"best PyTorch / ktune | {gemm_label} us | best config |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        b = r.get("baseline", {})
        k = r.get("ktune_ns")
        lines.append(f"| {r['shape']} | {r.get('configs', '-')} | {cell(us(k), '.1f')} | "
                     f"{cell(us(b.get('eager_ns')), '.1f')} | {cell(us(b.get('eager_graph_ns')), '.1f')} | "
                     f"{cell(us(b.get('compiled_ns')), '.1f')} | {cell(ratio(best_pytorch(b), k), '.2f')} | "
                     f"{cell(us(b.get('gemm_only_ns')), '.1f')} | {r.get('config', '-')} |")
    return "\n".join(lines) + "\n"


def check_tune(context, log, kernel, label, space, shape, precision, *strategy):
    """One check tune of `kernel` on CUDA at `shape` (brute force or sampled: `strategy`), judged
    and logged; a failed one fails the phase. Results go to KERNEL-check.db."""
    result = context.path(f"{kernel}-check-{label}-{precision}-{shape.replace('=', '_').replace(',', '_')}.json")
    rc = ktune.run(context.ktune, ktune.tune_args(
        kernel, "cuda", shape, precision, *(["--space", space] if space else []), *strategy,
        "--max-seconds-per-config", "0.005", "--config-timeout", "20", "--db", context.path(f"{kernel}-check.db"),
        "--no-export", "--json"), stdout=result, stderr=context.path(f"{kernel}-check.err"))
    ok, line = judge.check_line(label, precision, shape, rc, result)
    log(line)
    if not ok:
        context.fail()


def timed_cases(cases, timed):
    """{"<name>_ns": median} for each (name, make) (make() gives the callable), or
    "<name>_error" for one that cannot be made or run."""
    result = {}
    for name, make in cases:
        try:
            result[f"{name}_ns"] = timed(make())
        except Exception as e:  # a baseline that cannot run is recorded, not fatal
            result[f"{name}_error"] = f"{type(e).__name__}: {e}"[:300]
    return result


def run(context, name, baseline_module, shapes, precision, seconds, kernel, shape_arg, table):
    """The baselines of every shape, then a fresh `ktune tune -k kernel` per shape (shape_arg(text)
    is its --shape); table(rows, precision, device) makes the Markdown table, which is returned."""
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
    return text


if __name__ == "__main__":
    sys.exit("a helper of ci/gpu-check, not a command")
