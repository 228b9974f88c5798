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

    bias = torch.randn(cols, device="cuda", dtype=dtype)
    residual = torch.randn(rows, cols, device="cuda", dtype=dtype)

    def layernorm(t):
        return F.layer_norm(t, (cols,), weight, bias, eps=1e-5)

    def residual_layernorm(t):
        s = t + residual
        return F.layer_norm(s, (cols,), weight, bias, eps=1e-5), s

    def softmax(t):
        return torch.softmax(t, dim=-1)

    def geglu(t):
        gate, up = t.chunk(2, dim=-1)
        return F.gelu(gate) * up

    n = rows * cols
    # Model bytes as ktune counts them: each input read once, each output written once.
    cases = {
        "rmsnorm": (rmsnorm, x, (2 * n + cols) * element),
        "layernorm": (layernorm, x, (2 * n + 2 * cols) * element),
        "residual_layernorm": (residual_layernorm, x, (4 * n + 2 * cols) * element),
        "softmax": (softmax, x, 2 * n * element),
        "swiglu": (swiglu, x2, 3 * n * element),
        "geglu": (geglu, x2, 3 * n * element),
    }
    for name, (fn, arg, nbytes) in cases.items():
        record(f"{name}_eager", lambda fn=fn, arg=arg: fn(arg), nbytes)
        try:
            compiled = torch.compile(fn)
            record(f"{name}_compile", lambda compiled=compiled, arg=arg: compiled(arg), nbytes)
        except Exception as error:  # torch.compile needs a working Triton; report, do not fail
            results[f"{name}_compile_error"] = str(error)[:300]
    print(json.dumps({"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "results": results}))


if __name__ == "__main__":
    main()
