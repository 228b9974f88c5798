"""ci/gpu-check vulkan with KTUNE_VULKAN_PHASE=attention: Vulkan's flash attention on cooperative
matrices (path=coopmat) against ktune's CUDA mma.sync attention path (the bar: 0.3x) and cuDNN, fp16,
on one card in one run:
  - every coopmat config brute-forced at flash attention's odd shapes (kernels/flash_attention/family.json):
    each must verify;
  - at each shape of KTUNE_VULKAN_ATTENTION_SHAPES (B,H,N,D,CAUSAL; default below), brute force over
    Vulkan's coopmat configs, Vulkan's simt configs and CUDA's mma configs (at most SECONDS each),
    then PyTorch SDPA on cuDNN and FlashAttention 2.
Writes vulkan-attention.md and vulkan-attention.json to the output."""
import json
import os

from . import narrow
from .context import python_module
from .families import ROOT, shape_text, with_backend
from .ktune import run_json, tune_result

SHAPES = "4,16,1024,64,0 4,16,1024,128,0 2,16,2048,128,1 1,16,4096,64,0"
# Pinned defaults of each path (valid at every bench shape: 16 rows per subgroup, 32 keys a block).
COOPMAT_DEFAULT = {"path": "coopmat", "block_q": 64, "block_kv": 32, "threads_per_row": 1, "rows_per_thread": 1,
                   "keys_unrolled": 2, "warps": 4}


def path_space(backend, path, out):
    """flash_attention's space of `backend` with its path pinned to `path`, written to `out`."""
    space = narrow.load(os.path.join(ROOT, "search_spaces", f"flash_attention.{backend}.json"))
    default = COOPMAT_DEFAULT if path == "coopmat" else {**space["default"], "path": path}
    return narrow.write(narrow.narrow(space, {"path": [path]}, default=default),
                        os.path.join(out, f"flash_attention-{path}.{backend}.json"))


def shape_of(case):
    batch, heads, seq, head_dim, causal = case.split(",")
    return f"batch={batch},heads={heads},seq_q={seq},seq_kv={seq},head_dim={head_dim},causal={causal}"


def tune(binary, backend, space, shape, db, seconds):
    result = tune_result(run_json(binary, [
        "tune", "--kernel", "flash_attention", "--backend", backend, "--space", space, "--shape", shape,
        "--precision", "fp16", "--strategy", "brute_force", "--max-seconds-per-config", "0.2",
        "--time-limit", str(seconds), "--db", db, "--no-export"], timeout=1800))
    best = result.get("best") or {}
    return {"median_ns": best.get("median_ns"), "config": best.get("config"), "evaluated": result.get("evaluated"),
            "outcomes": result.get("outcomes"), "error": result.get("error")}


def sdpa(cases):
    baseline = python_module("baseline_attention", "--shapes", *cases, "--precisions", "fp16",
                             capture_output=True, text=True)
    try:
        return json.loads(baseline.stdout).get("results", [])
    except ValueError:
        return [{"error": baseline.stderr[-800:]}]


def microseconds(ns):
    return f"{ns / 1e3:.1f}" if ns else "-"


def ratio(numerator, denominator):
    return f"{numerator / denominator:.2f}x" if numerator and denominator else "-"


def run(binary, out, seconds, log):
    db = os.path.join(out, "vulkan-attention.db")
    spaces = {("vulkan", "coopmat"): path_space("vulkan", "coopmat", out),
              ("vulkan", "simt"): path_space("vulkan", "simt", out),
              ("cuda", "mma"): path_space("cuda", "mma", out)}
    checks = []
    odd = [shape_text(s) for f in with_backend("vulkan") if f.name == "flash_attention" for s in f.odd_shapes]
    for shape in odd:
        result = tune(binary, "vulkan", spaces[("vulkan", "coopmat")], shape, db, 120)
        checks.append({"shape": shape, **result})
        print(json.dumps({"check": checks[-1]}), file=log, flush=True)
    cases = os.environ.get("KTUNE_VULKAN_ATTENTION_SHAPES", SHAPES).split()
    rows = []
    for case in cases:
        row = {"case": case, "shape": shape_of(case)}
        for (backend, path), space in spaces.items():
            row[f"{backend}_{path}"] = tune(binary, backend, space, row["shape"], db, seconds)
        rows.append(row)
        print(json.dumps(row), file=log, flush=True)
    baselines = sdpa(cases)
    for row in rows:
        b, h, n, d, c = (int(x) for x in row["case"].split(","))
        for entry in baselines:
            if (entry.get("batch"), entry.get("heads"), entry.get("seq"), entry.get("head_dim"), entry.get("causal")) == \
                    (b, h, n, d, c) and "median_ns" in entry:
                row[entry["library"]] = entry["median_ns"]
    lines = ["Vulkan flash attention (fp16): coopmat and simt paths against ktune's CUDA mma.sync path and "
             "PyTorch SDPA (cuDNN, FlashAttention 2), brute force at most "
             f"{seconds} s per path and shape", ""]
    bad = [c for c in checks if c["error"] or set((c["outcomes"] or {}).keys()) != {"ok"}]
    lines.append(f"Check: every coopmat config at {len(checks)} odd shapes: "
                 + ("all ok" if not bad else f"{len(bad)} shapes with a config not ok: "
                    + "; ".join(f"{c['shape']} {c['outcomes']} {c['error'] or ''}" for c in bad)))
    lines += ["", "| B,H,N,D,causal | Vulkan coopmat us | Vulkan simt us | CUDA mma us | cuDNN us | "
              "coopmat / CUDA mma speed (bar 0.3x) | coopmat / cuDNN speed |", "|---|---:|---:|---:|---:|---:|---:|"]
    for row in rows:
        coop, simt, mma = (row[k]["median_ns"] for k in ("vulkan_coopmat", "vulkan_simt", "cuda_mma"))
        lines.append(f"| {row['case']} | {microseconds(coop)} | {microseconds(simt)} | {microseconds(mma)} | {microseconds(row.get('cudnn'))} | "
                     f"{ratio(mma, coop)} | {ratio(row.get('cudnn'), coop)} |")
    text = "\n".join(lines) + "\n"
    with open(os.path.join(out, "vulkan-attention.md"), "w") as f:
        f.write(text)
    with open(os.path.join(out, "vulkan-attention.json"), "w") as f:
        json.dump({"checks": checks, "rows": rows, "sdpa": baselines}, f, indent=1)
    return text, bad
