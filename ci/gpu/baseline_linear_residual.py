"""PyTorch's route to a transformer's output projection with its residual, y = x·Wᵀ + b + r, for
`ci/gpu-check linear_residual`: eager (`F.linear(x, W, b) + r`: cuBLASLt's GEMM with the bias,
then an add), the same captured in a CUDA graph (no host time per call) and torch.compile of
the same function, plus the GEMM alone (`F.linear(x, W)`, in a CUDA graph)
for reference. Timed as ktune times a GEMM (not memory-bound, so no L2 flush): CUDA events around one
call, the median of many.

Prints one JSON object: {"device", "torch", "results": {"TOKENSxHIDDEN": {"eager_ns",
"eager_graph_ns", "compiled_ns", "gemm_only_ns"}}}; a case that fails records "<what>_error" instead.
Usage: python3 -m ci.gpu.baseline_linear_residual PRECISION TOKENSxHIDDEN ...
"""
import sys

import torch
import torch.nn.functional as F

from .against_pytorch import baseline_main, graphed, timed_cases
from .baseline_families import timed

DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16}


def measure(text, precision):
    tokens, hidden = (int(v) for v in text.split("x"))
    dtype = DTYPES[precision]
    x = torch.randn(tokens, hidden, device="cuda", dtype=dtype)
    w = torch.randn(hidden, hidden, device="cuda", dtype=dtype) / hidden ** 0.5
    b = torch.randn(hidden, device="cuda", dtype=dtype)
    r = torch.randn(tokens, hidden, device="cuda", dtype=dtype)

    def eager():
        return F.linear(x, w, b) + r
    return timed_cases((("eager", lambda: eager), ("eager_graph", lambda: graphed(eager)),
                        ("compiled", lambda: torch.compile(eager)),
                        ("gemm_only", lambda: graphed(lambda: F.linear(x, w)))),
                       lambda fn: timed(fn, samples=100, flush_l2=False))


if __name__ == "__main__":
    baseline_main(sys.argv[1:], measure)
