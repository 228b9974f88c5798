#!/usr/bin/env python3
"""cuBLASLt baseline of ktune's GEMM benchmark: PyTorch's matmul routed to cuBLASLt
(torch.backends.cuda.preferred_blas_library("cublaslt")), which picks its algorithm by its own
heuristic. Timed as ktune times a compute-bound kernel: CUDA events around one call, median of
many samples, no L2 flush. The product is ktune's b_layout=0 case: D[m,n] = A[m,k] @ B[n,k]^T.

Usage: gemm_baseline.py --shapes m,n,k [m,n,k ...] --precisions bf16 fp16
Prints one JSON object: {"device", "torch", "blas", "results": [{"m","n","k","precision",
"median_ns","tflops"}]}; a shape that fails has "error" instead of the timing.
"""
import argparse
import json
import statistics

import torch

DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}


def timed(fn, samples=50):
    for _ in range(5):
        fn()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(samples):
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) * 1e6)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--shapes", nargs="+", required=True)
    parser.add_argument("--precisions", nargs="+", default=["bf16"])
    args = parser.parse_args()
    torch.backends.cuda.preferred_blas_library("cublaslt")
    torch.backends.cuda.matmul.allow_tf32 = False
    results = []
    for shape in args.shapes:
        m, n, k = (int(x) for x in shape.split(","))
        for precision in args.precisions:
            entry = {"m": m, "n": n, "k": k, "precision": precision}
            try:
                a = torch.randn(m, k, device="cuda", dtype=DTYPES[precision])
                b = torch.randn(n, k, device="cuda", dtype=DTYPES[precision])
                ns = timed(lambda: torch.matmul(a, b.t()))
                entry.update(median_ns=ns, tflops=2.0 * m * n * k / ns / 1e3)
                del a, b
            except Exception as e:  # a shape that does not fit still leaves the others
                entry["error"] = f"{type(e).__name__}: {e}"[:300]
            results.append(entry)
    print(json.dumps({"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
                      "blas": str(torch.backends.cuda.preferred_blas_library()), "results": results}, indent=1))


if __name__ == "__main__":
    main()
