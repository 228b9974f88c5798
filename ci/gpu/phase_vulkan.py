"""ci/gpu-check vulkan [SECONDS]: the Vulkan backend on NVIDIA's Vulkan driver, against the CUDA
backend in the same run. The machine has the driver but no loader: the Debian packages carried in
.gl/ (libvulkan1 and glvnd, see README) are unpacked first. KTUNE_VULKAN_PHASE (default all)
chooses among:

  check: every Vulkan family tuned at its odd shapes (kernels/<family>/family.json) in fp32, fp16
         and bf16 (a budget of configs each, the cooperative-matrix GEMM among them): every config
         must verify.
  bench: each memory-bound family at its bench shape (family.json) in fp16, tuned on Vulkan and on
         CUDA for SECONDS each (default 8); the compute-bound ones (GEMM, flash attention) at theirs
         in fp16 for three times as long, GEMM also against cuBLAS through PyTorch
         (ci/gpu/baseline_gemm.py).
  gemm:  every cooperative-matrix GEMM config (path=coopmat, brute force) at m=n=k=4096 fp16 (or
         KTUNE_VULKAN_GEMM_SHAPE), sorted by time with the driver's pipeline statistics
         (registers, ...), against cuBLAS/cuBLASLt through PyTorch measured before and after it;
         writes vulkan-gemm.md and vulkan-gemm.json.
  attention: flash attention's cooperative-matrix path checked (every config at its odd shapes) and
         brute-forced against its simt path, ktune's CUDA mma.sync path and cuDNN
         (ci/gpu/vulkan_attention.py; KTUNE_VULKAN_ATTENTION_SHAPES); writes vulkan-attention.md.
  Writes vulkan-table.md and vulkan.json to OUT. KTUNE_VULKAN_KERNELS="a b" limits both phases
  to those families; KTUNE_VULKAN_PRECISIONS="fp16 bf16 fp32" benches the memory-bound families
  in each of those precisions (default fp16; GEMM and attention stay fp16).

Also runs alone: python3 -m ci.gpu.phase_vulkan --ktune PATH --out DIR [--seconds S] [--phase check|bench|gemm|all]
"""
import argparse
import glob
import json
import os
import sqlite3
import subprocess
import sys

from . import families, narrow, vulkan_attention
from .context import python_module
from .families import ROOT, shape_text
from .ktune import run_json, tune_result

# The Vulkan loader's driver files where NVIDIA's images put them.
NVIDIA_ICD_FILES = ["/usr/share/vulkan/icd.d/nvidia_icd.json", "/etc/vulkan/icd.d/nvidia_icd.json",
                    "/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json"]


class Families:
    """The families with a Vulkan source (family.json), memory-bound and compute-bound (ktune list),
    with their odd and bench shapes."""

    def __init__(self, binary):
        described = {f.name: f for f in families.with_backend("vulkan")}
        try:
            listed = run_json(binary, ["list"]).get("kernels", [])
        except OSError:  # no binary (a plan printed without a build): the descriptors alone
            listed = []
        bound = {k["kernel"]: k.get("memory_bound", True) for k in listed}
        names = [k["kernel"] for k in listed if k["kernel"] in described] or list(described)
        self.memory_bound = [n for n in names if bound.get(n, True)]
        self.compute_bound = [n for n in names if not bound.get(n, True)]
        self.odd = {n: [shape_text(s) for s in described[n].odd_shapes] for n in names}
        self.bench = {n: shape_text(described[n].bench_shape) for n in names}


def selected(kernels):
    """KTUNE_VULKAN_KERNELS="a b" limits a phase to those families."""
    only = os.environ.get("KTUNE_VULKAN_KERNELS", "").split()
    return [k for k in kernels if not only or k in only]


def ktune(args, binary, timeout=600):
    return tune_result(run_json(binary, args, timeout=timeout))


def check(binary, db, log, listed):
    rows = []
    for kernel in selected(listed.memory_bound + listed.compute_bound):
        for shape in listed.odd[kernel]:
            for precision in ["fp32", "fp16", "bf16"]:
                budget = "60" if kernel == "gemm" and precision == "fp16" else "24"
                result = ktune(["tune", "--kernel", kernel, "--backend", "vulkan", "--shape", shape, "--precision",
                                precision, "--budget", budget, "--strategy", "random", "--db", db, "--no-export",
                                "--min-samples", "3", "--max-seconds-per-config", "0.05"], binary)
                row = {"kernel": kernel, "shape": shape, "precision": precision,
                       "outcomes": result.get("outcomes"), "error": result.get("error")}
                rows.append(row)
                print(json.dumps(row), file=log, flush=True)
    if rows:  # NVIDIA's driver reports registers etc. per pipeline: every result should carry them
        with sqlite3.connect(db) as connection:
            environments = [json.loads(e) for (e,) in connection.execute("SELECT environment FROM measurements")]
        rows[-1]["pipeline_statistics"] = [sum(1 for e in environments if e.get("pipeline")), len(environments)]
    return rows


def median_of(result):
    best = result.get("best") or {}
    return best.get("median_ns")


def bench_cases(listed):
    """(kernel, precision) pairs of the bench phase, in order."""
    precisions = os.environ.get("KTUNE_VULKAN_PRECISIONS", "fp16").split()
    return [(kernel, precision) for precision in precisions for kernel in selected(listed.memory_bound)] + \
        [(kernel, "fp16") for kernel in selected(listed.compute_bound)]


def bench(binary, db, seconds, log, root, listed):
    rows = []
    for kernel, precision in bench_cases(listed):
        shape = listed.bench[kernel]
        row = {"kernel": kernel, "shape": shape, "precision": precision}
        for backend in ["vulkan", "cuda"]:
            limit = str(seconds * (1 if kernel in listed.memory_bound else 3))
            result = ktune(["tune", "--kernel", kernel, "--backend", backend, "--shape", shape, "--precision", precision,
                            "--time-limit", limit, "--db", db, "--no-export"], binary)
            row[backend] = {"median_ns": median_of(result), "config": (result.get("best") or {}).get("config"),
                            "bytes_per_second": (result.get("best") or {}).get("bytes_per_second"),
                            "flops_per_second": (result.get("best") or {}).get("flops_per_second"),
                            "evaluated": result.get("evaluated"), "outcomes": result.get("outcomes"),
                            "error": result.get("error")}
        if row["vulkan"]["median_ns"] and row["cuda"]["median_ns"]:
            row["vulkan_over_cuda_speed"] = row["cuda"]["median_ns"] / row["vulkan"]["median_ns"]
        rows.append(row)
        print(json.dumps(row), file=log, flush=True)
    if not any(r["kernel"] == "gemm" for r in rows):
        return rows, {}
    cublas = cublas_baseline(root, 4096, 4096, 4096)
    print(json.dumps(cublas), file=log, flush=True)
    return rows, cublas


def cublas_baseline(root, m, n, k):
    baseline = python_module("baseline_gemm", "--shapes", f"{m},{n},{k}", "--precisions", "fp16",
                             capture_output=True, text=True)
    try:
        return json.loads(baseline.stdout)
    except ValueError:
        return {"error": baseline.stderr[-800:]}


def gemm_sweep(binary, out, log, root):
    """Every cooperative-matrix config at one shape, the cuBLAS baselines before and after."""
    shape = os.environ.get("KTUNE_VULKAN_GEMM_SHAPE", "m=4096,n=4096,k=4096")
    dims = dict(item.split("=") for item in shape.split(","))
    m, n, k = int(dims["m"]), int(dims["n"]), int(dims["k"])
    space = narrow.coopmat_space(narrow.load(os.path.join(root, "search_spaces", "gemm.vulkan.json")))
    space_file = narrow.write(space, os.path.join(out, "gemm-coopmat.vulkan.json"))
    db = os.path.join(out, "vulkan-gemm.db")
    before = cublas_baseline(root, m, n, k)
    result = ktune(["tune", "--kernel", "gemm", "--backend", "vulkan", "--space", space_file, "--shape", shape,
                    "--precision", "fp16", "--strategy", "brute_force", "--budget", "100000", "--max-seconds-per-config", "0.3",
                    "--db", db, "--no-export"], binary, timeout=1800)
    after = cublas_baseline(root, m, n, k)
    print(json.dumps({"gemm_sweep": result.get("outcomes"), "error": result.get("error")}), file=log, flush=True)
    rows = []
    with sqlite3.connect(db) as connection:
        for config, outcome, median, environment, message in connection.execute(
                "SELECT config, outcome, median_ns, environment, message FROM measurements"):
            rows.append({"config": json.loads(config), "outcome": outcome, "median_ns": median,
                         "pipeline": json.loads(environment).get("pipeline", {}), "message": message})
    rows.sort(key=lambda r: (r["median_ns"] is None, r["median_ns"] or 0))
    flops = 2.0 * m * n * k
    lines = [f"Vulkan GEMM, path=coopmat, every config at {shape} fp16 (brute force): "
             f"{len(rows)} configs, outcomes {result.get('outcomes')}", ""]
    for label, baseline in (("before", before), ("after", after)):
        for entry in baseline.get("results", []):
            if "median_ns" in entry:
                lines.append(f"- {entry['library']} ({label} the sweep): {entry['median_ns'] / 1e3:.1f} us, "
                             f"{entry['tflops']:.0f} TFLOP/s")
    best_library = min((e["median_ns"] for b in (before, after) for e in b.get("results", []) if "median_ns" in e),
                       default=None)
    lines += ["", "| block m x n x k | subgroups | stages | median | TFLOP/s | vs fastest cuBLAS | pipeline statistics |",
              "|---|---|---|---:|---:|---:|---|"]
    for r in rows:
        c = r["config"]
        if r["median_ns"]:
            ratio = f"{best_library / r['median_ns']:.2f}x" if best_library else "-"
            timing = f"{r['median_ns'] / 1e3:.1f} us | {flops / r['median_ns'] / 1e3:.0f} | {ratio}"
        else:
            timing = f"{r['outcome']} | - | -"
        stats = ", ".join(f"{key} {value}" for key, value in r["pipeline"].items())
        lines.append(f"| {c['block_m']}x{c['block_n']}x{c['block_k']} | {c['warps_m']}x{c['warps_n']} | "
                     f"{c['stages']} | {timing} | {stats} |")
    text = "\n".join(lines) + "\n"
    with open(os.path.join(out, "vulkan-gemm.md"), "w") as f:
        f.write(text)
    return {"shape": shape, "rows": rows, "cublas_before": before, "cublas_after": after}


def table(check_rows, bench_rows, cublas, devices):
    lines = []
    vulkan = [d for b in devices["backends"] if b["backend"] == "vulkan" for d in b["devices"]]
    if vulkan:
        d = vulkan[0]
        lines.append(f"Vulkan device: {d['name']}, API {d['properties'].get('api_version')}, driver "
                     f"{d['properties'].get('driver_name')} {d['properties'].get('driver_info')}, cooperative "
                     f"matrix: {d['properties'].get('cooperative_matrix')}, subgroup {d['limits'].get('subgroup_size')}, "
                     f"shared {d['limits'].get('max_shared_memory_per_block')} B")
        lines.append("")
    if check_rows:
        bad = [r for r in check_rows if r["error"] or set((r["outcomes"] or {}).keys()) != {"ok"}]
        total = sum(sum((r["outcomes"] or {}).values()) for r in check_rows)
        lines.append(f"Check: {len(check_rows)} tunes, {total} configs, {len(bad)} tunes with a config not ok")
        statistics = check_rows[-1].get("pipeline_statistics")
        if statistics:
            lines.append(f"Driver pipeline statistics recorded for {statistics[0]} of {statistics[1]} configs")
        for r in bad:
            lines.append(f"- {r['kernel']} {r['shape']} {r['precision']}: {r['outcomes']} {r['error'] or ''}")
        lines.append("")
    if bench_rows:
        lines.append("| family | shape | precision | Vulkan median | CUDA median | Vulkan speed / CUDA | Vulkan GB/s or TFLOP/s |")
        lines.append("|---|---|---|---|---|---|---|")
        for r in bench_rows:
            v, c = r["vulkan"], r["cuda"]
            ratio = r.get("vulkan_over_cuda_speed")
            rate = (f"{v['flops_per_second'] / 1e12:.1f} TFLOP/s" if r["kernel"] in ("gemm", "flash_attention")
                    and v.get("flops_per_second") else
                    f"{v['bytes_per_second'] / 1e9:.0f} GB/s" if v.get("bytes_per_second") else "-")
            lines.append(f"| {r['kernel']} | {r['shape']} | {r['precision']} | {(v['median_ns'] or 0) / 1e3:.1f} us | "
                         f"{(c['median_ns'] or 0) / 1e3:.1f} us | {ratio:.2f}x |" if ratio else
                         f"| {r['kernel']} | {r['shape']} | {r['precision']} | {v.get('error') or v['median_ns']} | "
                         f"{c.get('error') or c['median_ns']} | - |")
            lines[-1] += f" {rate} |" if ratio else " - |"
        for entry in (cublas or {}).get("results", []):
            if "median_ns" in entry:
                gemm = next((r for r in bench_rows if r["kernel"] == "gemm"), None)
                if gemm and gemm["vulkan"]["median_ns"]:
                    lines.append("")
                    lines.append(f"GEMM 4096^3 fp16: Vulkan {2 * 4096 ** 3 / gemm['vulkan']['median_ns'] / 1e3:.0f} "
                                 f"TFLOP/s vs {entry['library']} {entry['tflops']:.0f} TFLOP/s = "
                                 f"{entry['median_ns'] / gemm['vulkan']['median_ns']:.2f}x of {entry['library']}")
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--ktune", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--seconds", type=float, default=8)
    parser.add_argument("--phase", default="all", choices=["check", "bench", "gemm", "attention", "all"])
    args = parser.parse_args(argv)
    return measure(args.ktune, args.out, args.seconds, args.phase)


def measure(binary, out, seconds, phase):
    root = ROOT
    os.makedirs(out, exist_ok=True)
    db = os.path.join(out, "vulkan.db")
    devices = json.loads(subprocess.run([binary, "devices", "--json"], capture_output=True, text=True).stdout)
    if phase == "gemm":
        with open(os.path.join(out, "vulkan-progress.log"), "a") as log:
            sweep = gemm_sweep(binary, out, log, root)
        with open(os.path.join(out, "vulkan-gemm.json"), "w") as f:
            json.dump({"sweep": sweep, "devices": devices}, f, indent=1)
        with open(os.path.join(out, "vulkan-gemm.md")) as f:
            print(f.read())
        return 0
    if phase == "attention":
        with open(os.path.join(out, "vulkan-progress.log"), "a") as log:
            text, bad = vulkan_attention.run(binary, out, seconds * 3, log)
        print(text)
        return 1 if bad else 0
    listed = Families(binary)
    with open(os.path.join(out, "vulkan-progress.log"), "a") as log:
        check_rows = check(binary, db, log, listed) if phase in ("check", "all") else []
        bench_rows, cublas = bench(binary, db, seconds, log, root, listed) if phase in ("bench", "all") else ([], {})
    text = table(check_rows, bench_rows, cublas, devices)
    with open(os.path.join(out, "vulkan-table.md"), "w") as f:
        f.write(text)
    with open(os.path.join(out, "vulkan.json"), "w") as f:
        json.dump({"check": check_rows, "bench": bench_rows, "cublas": cublas, "devices": devices}, f, indent=1)
    print(text)
    return 0


def load_vulkan_loader(root):
    """Unpacks the carried Debian packages of .gl/ when the machine has no Vulkan loader, and points
    the loader at NVIDIA's driver file unless VK_DRIVER_FILES names one."""
    loaders = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True).stdout
    if "libvulkan.so.1" not in loaders:
        for deb in sorted(glob.glob(os.path.join(root, ".gl", "*.deb"))):
            subprocess.run(["dpkg", "-x", deb, "/"])
        subprocess.run(["ldconfig"])
    if not os.environ.get("VK_DRIVER_FILES"):
        for icd in NVIDIA_ICD_FILES:
            if os.path.isfile(icd):
                os.environ["VK_DRIVER_FILES"] = icd
                break
    print(f"VK_DRIVER_FILES={os.environ.get('VK_DRIVER_FILES') or 'unset'}", flush=True)


def run(context):
    load_vulkan_loader(context.root)
    try:
        context.status = measure(context.ktune, context.final, context.seconds(8),
                                 context.environ.get("KTUNE_VULKAN_PHASE", "all"))
    except Exception as e:  # a failed measurement fails the phase, as the script's exit status did
        print(f"vulkan: {type(e).__name__}: {e}", file=sys.stderr, flush=True)
        context.status = 1


def plan(context):
    phase = context.environ.get("KTUNE_VULKAN_PHASE", "all")
    print(f"== vulkan plan: phase {phase}, {context.seconds(8):g} s per tune")
    if phase == "gemm":
        space = narrow.coopmat_space(narrow.load(os.path.join(context.root, "search_spaces", "gemm.vulkan.json")))
        print(f"gemm coopmat sweep at {os.environ.get('KTUNE_VULKAN_GEMM_SHAPE', 'm=4096,n=4096,k=4096')}, "
              f"{len(space.get('starting_points', []))} starting points kept")
        return
    if phase == "attention":
        print(f"flash attention coopmat check and sweep at "
              f"{os.environ.get('KTUNE_VULKAN_ATTENTION_SHAPES', vulkan_attention.SHAPES)}, {3 * context.seconds(8):g} s per path")
        return
    listed = Families(context.ktune)
    if phase in ("check", "all"):
        for kernel in selected(listed.memory_bound + listed.compute_bound):
            print(f"check {kernel}: {' '.join(listed.odd[kernel])}")
    if phase in ("bench", "all"):
        for kernel, precision in bench_cases(listed):
            print(f"bench {kernel} {listed.bench[kernel]} {precision}")


if __name__ == "__main__":
    sys.exit(main())
