#!/usr/bin/env python3
"""PyTorch baselines for ktune's GPU benchmark, measured the way ktune measures: CUDA events
around one call, L2 flushed before each sample, median of many samples.

Prints one JSON object: {"device", "torch", "results": {name: {"median_ns", "bytes", "tb_s"}}}.
Usage: gpu_baselines.py ROWS COLS
"""
import json
import statistics
import sys

import torch
import torch.nn.functional as F


def timed(fn, samples=50):
    flush = torch.empty(2 * torch.cuda.get_device_properties(0).L2_cache_size, dtype=torch.uint8, device="cuda")
    for _ in range(5):
        fn()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(samples):
        flush.zero_()
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) * 1e6)
    return statistics.median(times)


def main():
    rows, cols = int(sys.argv[1]), int(sys.argv[2])
    dtype = torch.bfloat16
    torch.manual_seed(0)
    x = torch.randn(rows, cols, device="cuda", dtype=dtype)
    weight = torch.rand(cols, device="cuda", dtype=dtype) + 0.5
    x2 = torch.randn(rows, 2 * cols, device="cuda", dtype=dtype)
    element = x.element_size()
    results = {}

    def record(name, fn, nbytes):
        ns = timed(fn)
        results[name] = {"median_ns": ns, "bytes": nbytes, "tb_s": nbytes / ns / 1e3}

    copy_out = torch.empty_like(x)
    record("copy", lambda: copy_out.copy_(x), 2 * x.numel() * element)
    big = torch.empty(1 << 30, dtype=torch.uint8, device="cuda")
    big_out = torch.empty_like(big)
    record("copy_1GiB", lambda: big_out.copy_(big), 2 * big.numel())
    del big, big_out

    def rmsnorm(t):
        return F.rms_norm(t, (cols,), weight, eps=1e-6)

    def swiglu(t):
        gate, up = t.chunk(2, dim=-1)
        return F.silu(gate) * up

    rms_bytes = (2 * rows * cols + cols) * element
    swiglu_bytes = (2 * rows * cols + rows * cols) * element
    record("rmsnorm_eager", lambda: rmsnorm(x), rms_bytes)
    record("swiglu_eager", lambda: swiglu(x2), swiglu_bytes)
    try:
        rms_compiled = torch.compile(rmsnorm)
        swiglu_compiled = torch.compile(swiglu)
        record("rmsnorm_compile", lambda: rms_compiled(x), rms_bytes)
        record("swiglu_compile", lambda: swiglu_compiled(x2), swiglu_bytes)
    except Exception as error:  # torch.compile needs a working Triton; report, do not fail
        results["compile_error"] = str(error)[:500]
    print(json.dumps({"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "results": results}))


if __name__ == "__main__":
    main()
