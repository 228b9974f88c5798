"""PyTorch's route to a transformer's MLP block, y = act(x·W1ᵀ + b1)·W2ᵀ + b2 (GELU), for
`ci/gpu-check ffn`: eager (`F.linear(F.gelu(F.linear(x, W1, b1)), W2, b2)`: cuBLASLt's GEMMs, the
hidden activation written and read between them), the same captured in a CUDA graph (no host time
per call) and torch.compile of the same function, plus the two GEMMs alone (in a CUDA graph) for
reference. Timed as ktune times a GEMM (not memory-bound, so no L2 flush): CUDA events around one
call, the median of many.

Prints one JSON object: {"device", "torch", "results": {"TOKENSxHIDDENxFFN": {"eager_ns",
"eager_graph_ns", "compiled_ns", "gemm_only_ns"}}}; a case that fails records "<what>_error" instead.
Usage: python3 -m ci.gpu.baseline_ffn PRECISION TOKENSxHIDDENxFFN ...
"""
import sys

import torch
import torch.nn.functional as F

from .against_pytorch import baseline_main, graphed, timed_cases
from .baseline_families import timed

DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16}


def measure(text, precision):
    tokens, hidden, ffn = (int(v) for v in text.split("x"))
    dtype = DTYPES[precision]
    x = torch.randn(tokens, hidden, device="cuda", dtype=dtype)
    w1 = torch.randn(ffn, hidden, device="cuda", dtype=dtype) / hidden ** 0.5
    b1 = torch.randn(ffn, device="cuda", dtype=dtype)
    w2 = torch.randn(hidden, ffn, device="cuda", dtype=dtype) / ffn ** 0.5
    b2 = torch.randn(hidden, device="cuda", dtype=dtype)
    h = torch.randn(tokens, ffn, device="cuda", dtype=dtype)

    def eager():
        return F.linear(F.gelu(F.linear(x, w1, b1)), w2, b2)

    def gemms():
        F.linear(x, w1, b1)
        return F.linear(h, w2, b2)
    return timed_cases((("eager", lambda: eager), ("eager_graph", lambda: graphed(eager)),
                        ("compiled", lambda: torch.compile(eager)), ("gemm_only", lambda: graphed(gemms))),
                       lambda fn: timed(fn, samples=50, flush_l2=False))


if __name__ == "__main__":
    baseline_main(sys.argv[1:], measure)
