"""GEMM configs in a short burst and under sustained load, on one card: whether a card at its power
limit ranks configs differently from a tune's short timings. For each route (PyTorch's matmul on
cuBLAS, then each ktune config given, run through the library), after a pause for the card to
cool: the median of BURST runs, then SECONDS of back-to-back runs whose last second gives the
sustained median, with the SM clock and power read (NVML through torch, where it is there) at
the end of each. A diagnostic, not a test:

    PYTHONPATH=python KTUNE_LIBRARY=... python3 -m ci.gpu.gemm_sustained --shape 16384,28672,4096 \\
        --config '{"path": "wgmma", "block_m": 128, ...}' [--config ...] [--seconds 4] [--device cpu]

Prints a markdown table: route, burst and sustained TFLOP/s, their ratio, clock and power.
"""
import argparse
import json
import statistics
import time

import torch

import ktune
from ktune import _dispatch


def nvml_reading():
    """(SM clock MHz, power W) of the current GPU, None where NVML is not there."""
    readings = []
    for read in (lambda: torch.cuda.clock_rate(), lambda: torch.cuda.power_draw() / 1000.0):
        try:
            readings.append(read())
        except Exception:  # noqa: BLE001 - NVML (pynvml) absent or refusing: the column stays empty
            readings.append(None)
    return tuple(readings)


def timed_runs(fn, count, device):
    """Seconds of each of `count` runs of fn, back to back (events between them on a GPU)."""
    if device == "cpu":
        times = []
        for _ in range(count):
            start = time.perf_counter()
            fn()
            times.append(time.perf_counter() - start)
        return times
    events = [torch.cuda.Event(enable_timing=True) for _ in range(count + 1)]
    events[0].record()
    for i in range(count):
        fn()
        events[i + 1].record()
    events[-1].synchronize()
    return [events[i].elapsed_time(events[i + 1]) / 1e3 for i in range(count)]


def measure(fn, device, seconds, burst, pause):
    """{burst_s, sustained_s, clock_mhz, power_w} of fn: a burst after `pause` s idle, then
    `seconds` of back-to-back runs (the last second's median)."""
    for _ in range(3):
        fn()
    if device != "cpu":
        torch.cuda.synchronize()
    time.sleep(pause)
    burst_s = statistics.median(timed_runs(fn, burst, device))
    per_batch = max(1, int(0.05 / burst_s))  # ~50 ms between host reads
    last_second, started = [], time.time()
    while time.time() - started < seconds:
        batch = timed_runs(fn, per_batch, device)
        last_second = (last_second + batch)[-max(1, int(1.0 / burst_s)):]
    clock, power = nvml_reading() if device != "cpu" else (None, None)
    return {"burst_s": burst_s, "sustained_s": statistics.median(last_second), "clock_mhz": clock, "power_w": power}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shape", default="16384,28672,4096", help="m,n,k of D[m,n] = A[m,k]·B[n,k]ᵀ")
    parser.add_argument("--config", action="append", default=[], help="a ktune gemm config as JSON (repeatable)")
    parser.add_argument("--seconds", type=float, default=4.0, help="sustained seconds per route")
    parser.add_argument("--burst", type=int, default=20, help="runs of the burst")
    parser.add_argument("--pause", type=float, default=3.0, help="idle seconds before each route")
    parser.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    parser.add_argument("--precision", default="bf16", choices=["bf16", "fp16", "fp32"])
    args = parser.parse_args(argv)
    m, n, k = (int(v) for v in args.shape.split(","))
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[args.precision]
    device = torch.device(args.device)
    x = torch.randn(m, k, device=device, dtype=dtype)
    w = torch.randn(n, k, device=device, dtype=dtype) * k ** -0.5
    routes = [("PyTorch matmul", lambda: torch.nn.functional.linear(x, w))]
    context = _dispatch.context_for(device)
    dims = {"m": m, "n": n, "k": k, "b_layout": 0, "epilogue": 0}
    for text in args.config:
        config = json.loads(text)
        label = " ".join(f"{key}={value}" for key, value in config.items()
                         if key in ("block_m", "block_n", "consumers", "stages", "cluster_m", "group_m", "persistent",
                                    "micro_m", "micro_n", "threads"))

        def run(config=config):
            context.use_config("gemm", dims, args.precision, config)
            return ktune.linear(x, w)
        routes.append((f"ktune {label}", run))
    flops = 2.0 * m * n * k
    rows = ["| route | burst TFLOP/s | sustained TFLOP/s | sustained / burst | SM MHz | W |",
            "|---|---:|---:|---:|---:|---:|"]
    with torch.no_grad():
        for name, fn in routes:
            try:
                r = measure(fn, args.device, args.seconds, args.burst, args.pause)
            except Exception as e:  # noqa: BLE001 - a route that cannot run is reported, the others go on
                rows.append(f"| {name} | {type(e).__name__}: {str(e)[:120]} | | | | |")
                continue
            clock = f"{r['clock_mhz']:.0f}" if r["clock_mhz"] is not None else "-"
            power = f"{r['power_w']:.0f}" if r["power_w"] is not None else "-"
            rows.append(f"| {name} | {flops / r['burst_s'] / 1e12:.4g} | {flops / r['sustained_s'] / 1e12:.4g} | "
                        f"{r['burst_s'] / r['sustained_s']:.3f} | {clock} | {power} |")
            print(rows[-1], flush=True)
    name = torch.cuda.get_device_name(0) if args.device == "cuda" else "CPU"
    print(f"\n{m}x{n}x{k} {args.precision} on {name}, {args.seconds:g} s sustained per route\n")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
