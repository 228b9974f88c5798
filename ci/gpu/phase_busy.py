"""ci/gpu-check busy [SECONDS]: how busy ktune keeps the GPU while it tunes, and how many distinct
configs it measures a minute, for the binary under test (KTUNE) against an earlier build
(KTUNE_BEFORE) in the same run, on the same card.

Workloads: each memory-bound family at its bench shape (family.json, 16384 x 4096 for most) in
bf16, gemm at 4096^3 bf16 and flash_attention at 4 x 4096 x h16 x d128 bf16; KTUNE_BUSY_WORKLOADS
("kernel@shape@precision ...") chooses others. Each workload is tuned by both binaries, in
alternating order, each on a fresh database and a fresh compile cache (a cold `ktune tune`),
with --time-limit SECONDS (default 20) and nothing else changed, while nvidia-smi samples the
GPU's utilization every 100 ms. KTUNE_BUSY_ARGS adds arguments to both (e.g. "--strategy random
--seed 1", so that both binaries propose the same configs). Then, for the configs both measured,
the ratio of their medians (after / before): a faster tune that measures something else is a
regression.

Writes busy.json (every figure) and busy-table.md to the output; KTUNE_BUSY_KEEP_DB=1 copies the
databases too."""
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import threading
import time

from . import ktune

ATTENTION = "batch=4,heads=16,seq_q=4096,seq_kv=4096,head_dim=128"


def workloads(context):
    chosen = context.environ.get("KTUNE_BUSY_WORKLOADS", "").split()
    if chosen:
        return [tuple(item.split("@")) for item in chosen]
    items = []
    for kernel in context.kernels:  # the memory-bound families with a CUDA space
        bench = context.family(kernel).bench_shape
        items.append((kernel, ",".join(f"{k}={v}" for k, v in bench.items()), "bf16"))
    items.append(("gemm", "m=4096,n=4096,k=4096", "bf16"))
    items.append(("flash_attention", ATTENTION, "bf16"))
    return items


class Utilization:
    """nvidia-smi's utilization.gpu every 100 ms while a tune runs."""

    def __init__(self):
        self.samples = []
        self._process = None
        self._thread = None

    def __enter__(self):
        self._process = subprocess.Popen(["nvidia-smi", "--query-gpu=utilization.gpu", "--format=csv,noheader,nounits",
                                          "-lms", "100"], stdout=subprocess.PIPE, text=True)
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()
        return self

    def _read(self):
        for line in self._process.stdout:
            try:
                self.samples.append(float(line.split(",")[0]))
            except ValueError:
                pass

    def __exit__(self, *exc):
        self._process.terminate()
        self._process.wait()
        self._thread.join(timeout=2)

    def summary(self):
        s = self.samples
        return {"samples": len(s), "mean": statistics.fmean(s) if s else None,
                "share_at_least_50": sum(v >= 50 for v in s) / len(s) if s else None}


def measured_rows(db):
    """{config_key: (outcome, median_ns, environment)} of every row the tune measured."""
    connection = sqlite3.connect(db)
    try:
        rows = connection.execute("SELECT config_key, outcome, median_ns, environment FROM measurements").fetchall()
    finally:
        connection.close()
    return {key: (outcome, median, json.loads(environment or "{}")) for key, outcome, median, environment in rows}


def host_breakdown(rows):
    """Sums over the measured configs: worker seconds, device seconds and the worker's phases."""
    phases, evaluation, kernel, between = {}, 0.0, 0.0, 0.0
    for _, _, environment in rows.values():
        evaluation += environment.get("evaluation_seconds", 0.0)
        device = environment.get("device_ns") or {}
        kernel += device.get("kernel", 0.0) / 1e9
        between += device.get("between", 0.0) / 1e9
        for phase, ms in (environment.get("host_ms") or {}).items():
            phases[phase] = phases.get(phase, 0.0) + ms / 1e3
    return {"evaluation_s": evaluation, "device_kernel_s": kernel, "device_between_s": between,
            "worker_phases_s": {k: round(v, 3) for k, v in sorted(phases.items())}}


def tune(context, binary, label, item, seconds):
    kernel, shape, precision = item
    name = f"{label}-{kernel}"
    db = context.path(f"busy-{name}.db")
    cache = context.path(f"busy-cache-{name}")
    for stale in (db, db + "-wal", db + "-shm"):
        if os.path.exists(stale):
            os.remove(stale)
    shutil.rmtree(cache, ignore_errors=True)
    env = dict(os.environ, KTUNE_CACHE_DIR=cache)
    args = ["tune", "-k", kernel, "-b", "cuda", "--shape", shape, "--precision", precision, "--time-limit",
            str(seconds), "--db", db, "--no-export", "--json", *context.environ.get("KTUNE_BUSY_ARGS", "").split()]
    started = time.time()
    with Utilization() as utilization:
        rc = ktune.run(binary, args, stdout=context.path(f"busy-{name}.json"), stderr=context.path(f"busy-{name}.err"),
                       timeout=seconds * 4 + 120, interrupt=True, env=env)
    wall = time.time() - started
    summary = ktune.tune_result(ktune.load_json(context.path(f"busy-{name}.json"))) or {}
    rows = measured_rows(db) if os.path.exists(db) else {}
    tuned = summary.get("seconds") or wall
    record = {"binary": label, "kernel": kernel, "shape": shape, "precision": precision, "exit": rc,
              "wall_s": round(wall, 2), "tune_s": tuned, "configs": len(rows),
              "configs_per_minute": len(rows) / tuned * 60 if tuned else None,
              "nvidia_smi": utilization.summary(), "device_use": summary.get("device_use"),
              "best_ns": (summary.get("best") or {}).get("median_ns"), **host_breakdown(rows)}
    record["device_busy_share"] = (record["device_kernel_s"] + record["device_between_s"]) / tuned if tuned else None
    record["kernel_share"] = record["device_kernel_s"] / tuned if tuned else None
    if context.environ.get("KTUNE_BUSY_KEEP_DB") == "1" and os.path.exists(db):
        shutil.copy(db, context.out(f"busy-{name}.db"))
    return record, rows


def same_configs(before, after):
    """Median ratios (after / before) of the configs both measured ok."""
    ratios = [after[key][1] / before[key][1] for key in before.keys() & after.keys()
              if before[key][0] == "ok" and after[key][0] == "ok" and before[key][1] and after[key][1]]
    if not ratios:
        return {"common_ok": 0}
    ratios.sort()
    return {"common_ok": len(ratios), "median_ratio": statistics.median(ratios),
            "geomean_ratio": statistics.geometric_mean(ratios), "p10": ratios[len(ratios) // 10],
            "p90": ratios[(len(ratios) * 9) // 10]}


def percent(value):
    return "-" if value is None else f"{100 * value:.0f}%"


def number(value, digits=0):
    return "-" if value is None else f"{value:.{digits}f}"


def table(records, comparisons):
    lines = ["| workload | binary | configs/min | device busy (kernel) | nvidia-smi mean | >=50% | worker s / tune s |",
             "|---|---|---:|---:|---:|---:|---:|"]
    for r in records:
        smi = r["nvidia_smi"]
        lines.append(f"| {r['kernel']} | {r['binary']} | {number(r['configs_per_minute'])} | "
                     f"{percent(r['device_busy_share'])} ({percent(r['kernel_share'])}) | "
                     f"{number(smi['mean'])}% | {percent(smi['share_at_least_50'])} | "
                     f"{number(r['evaluation_s'], 1)} / {number(r['tune_s'], 1)} |")
    lines += ["", "| workload | configs/min after / before | same configs | median after/before | p10..p90 |",
              "|---|---:|---:|---:|---|"]
    for kernel, c in comparisons.items():
        lines.append(f"| {kernel} | {number(c.get('speedup'), 2)}x | {c['common_ok']} | "
                     f"{number(c.get('median_ratio'), 4)} | {number(c.get('p10'), 3)}..{number(c.get('p90'), 3)} |")
    return "\n".join(lines) + "\n"


def run(context):
    seconds = float(context.seconds(20))
    before = context.environ.get("KTUNE_BEFORE")
    binaries = [("after", context.ktune)] + ([("before", before)] if before else [])
    print(f"== busy: {seconds:g} s a tune; binaries {', '.join(label for label, _ in binaries)}", flush=True)
    records, comparisons = [], {}
    for n, item in enumerate(workloads(context)):
        order = binaries if n % 2 == 0 else list(reversed(binaries))
        rows = {}
        for label, binary in order:
            record, rows[label] = tune(context, binary, label, item, seconds)
            records.append(record)
            print(json.dumps(record), flush=True)
        if "before" in rows:
            c = same_configs(rows["before"], rows["after"])
            a, b = [next(r for r in records[-2:] if r["binary"] == label) for label in ("after", "before")]
            if a["configs_per_minute"] and b["configs_per_minute"]:
                c["speedup"] = a["configs_per_minute"] / b["configs_per_minute"]
            comparisons[item[0]] = c
            print(item[0], json.dumps(c), flush=True)
    with open(context.out("busy.json"), "w") as f:
        json.dump({"seconds": seconds, "records": records, "comparisons": comparisons}, f, indent=1)
    text = table(records, comparisons)
    with open(context.out("busy-table.md"), "w") as f:
        f.write(text)
    print(text, flush=True)


def plan(context):
    print(f"== busy plan: {', '.join('@'.join(w) for w in workloads(context))}; "
          f"{context.seconds(20)} s each, binaries KTUNE and KTUNE_BEFORE={context.environ.get('KTUNE_BEFORE')}")
