"""PyTorch's InstanceNorm2d (affine, training-mode statistics) for `ci/gpu-check instance_norm`:
eager, eager captured in a CUDA graph (no host time per call) and torch.compile, timed the way
ktune times: CUDA events around one call, L2 flushed before each sample, the
median. Also a copy of the same bytes (x read, out written), the ceiling of a memory-bound kernel.

Prints one JSON object: {"device", "torch", "results": {SHAPE: {"eager_ns", "eager_graph_ns",
"compiled_ns", "copy_ns", "bytes"}}}; a case that fails records "<what>_error" with the message instead.
Usage: python3 -m ci.gpu.baseline_instance_norm PRECISION BATCHxCHANNELSxHEIGHTxWIDTH ...
"""
import sys

import torch
import torch.nn.functional as F

from .against_pytorch import baseline_main, graphed, timed_cases
from .baseline_families import timed

EPSILON = 1e-5  # kInstanceNormEpsilon (kernels/instance_norm/instance_norm.hpp)
DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}


def measure(text, precision):
    batch, channels, height, width = (int(v) for v in text.split("x"))
    dtype = DTYPES[precision]
    x = torch.randn(batch, channels, height, width, device="cuda", dtype=dtype)
    gamma = (torch.rand(channels, device="cuda") + 0.5).to(dtype)
    beta = torch.randn(channels, device="cuda", dtype=dtype)
    out = torch.empty_like(x)

    def eager():
        return F.instance_norm(x, weight=gamma, bias=beta, eps=EPSILON)
    result = {"bytes": (2 * x.numel() + 2 * channels) * x.element_size()}
    result.update(timed_cases((("eager", lambda: eager), ("eager_graph", lambda: graphed(eager)),
                               ("compiled", lambda: torch.compile(eager)), ("copy", lambda: lambda: out.copy_(x))),
                              timed))
    return result


if __name__ == "__main__":
    baseline_main(sys.argv[1:], measure)
