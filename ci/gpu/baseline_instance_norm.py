"""PyTorch's InstanceNorm2d (affine, training-mode statistics) for `ci/gpu-check instance_norm`,
timed the way ktune times: CUDA events around one call, L2 flushed before each sample, the
median. Also a copy of the same bytes (x read, out written), the ceiling of a memory-bound kernel.

Prints one JSON object: {"device", "torch", "results": {SHAPE: {"eager_ns", "compiled_ns",
"copy_ns", "bytes"}}}; a case that fails records "<what>_error" with the message instead.
Usage: python3 -m ci.gpu.baseline_instance_norm PRECISION BATCHxCHANNELSxHEIGHTxWIDTH ...
"""
import json
import sys

import torch
import torch.nn.functional as F

from .baseline_families import timed

EPSILON = 1e-5  # kInstanceNormEpsilon (kernels/instance_norm/instance_norm.hpp)
DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}


def measure(shape, dtype):
    batch, channels, height, width = shape
    x = torch.randn(batch, channels, height, width, device="cuda", dtype=dtype)
    gamma = (torch.rand(channels, device="cuda") + 0.5).to(dtype)
    beta = torch.randn(channels, device="cuda", dtype=dtype)
    out = torch.empty_like(x)
    element = x.element_size()
    result = {"bytes": (2 * x.numel() + 2 * channels) * element}

    def eager():
        return F.instance_norm(x, weight=gamma, bias=beta, eps=EPSILON)
    compiled = torch.compile(eager)
    for name, fn in (("eager", eager), ("compiled", compiled), ("copy", lambda: out.copy_(x))):
        try:
            result[f"{name}_ns"] = timed(fn)
        except Exception as e:  # a baseline that cannot run is recorded, not fatal
            result[f"{name}_error"] = f"{type(e).__name__}: {e}"[:300]
    return result


def main(argv):
    precision, shapes = argv[0], argv[1:]
    results = {}
    for text in shapes:
        shape = tuple(int(v) for v in text.split("x"))
        results[text] = measure(shape, DTYPES[precision])
    print(json.dumps({"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "precision": precision,
                      "results": results}, indent=1))


if __name__ == "__main__":
    main(sys.argv[1:])
