"""Baselines of ktune's flash attention benchmark, measured in the same run: PyTorch's
scaled_dot_product_attention restricted to one backend at a time, cuDNN's fused attention
(SDPBackend.CUDNN_ATTENTION) and FlashAttention 2 (SDPBackend.FLASH_ATTENTION). Inputs are
[batch, heads, seq, head_dim] contiguous, as ktune's q, k, v; the softmax scale 1/sqrt(head_dim);
is_causal with seq_q == seq_kv (where PyTorch's top-left mask equals ktune's bottom-right one).
Timed as ktune times a compute-bound kernel: CUDA events around one call, median of many
samples, no L2 flush. FLOPs 4*B*H*N*N*D, halved when causal.
With KTUNE_ATTENTION_PASS=backward: the backward pass alone (torch.autograd.grad of SDPA's output
into q, k, v, the forward's graph kept), FLOPs 2.5 times the forward's (FlashAttention's convention,
as ktune's flash_attention_backward counts them).

Usage: python3 -m ci.gpu.baseline_attention --shapes B,H,N,D,CAUSAL [...] --precisions bf16 fp16
Prints one JSON object: {"device", "torch", "results": [{"batch","heads","seq","head_dim",
"causal","precision","library","median_ns","tflops"}]} with library "cudnn" or "flash"; a case
that fails has "error" instead.
"""
import os

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from .baseline_cli import parse_args, print_results
from .baseline_families import timed  # same events and median as the other baselines

DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16}
BACKENDS = {"cudnn": SDPBackend.CUDNN_ATTENTION, "flash": SDPBackend.FLASH_ATTENTION}


BACKWARD = os.environ.get("KTUNE_ATTENTION_PASS", "forward") == "backward"


def flops(batch, heads, seq, head_dim, causal):
    full = 4.0 * batch * heads * seq * seq * head_dim * (2.5 if BACKWARD else 1.0)
    return full / 2 if causal else full


def call(q, k, v, causal):
    """The timed call: SDPA's forward, or (BACKWARD) its backward alone."""
    if not BACKWARD:
        return lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    inputs = [t.detach().requires_grad_() for t in (q, k, v)]
    out = F.scaled_dot_product_attention(*inputs, is_causal=causal)
    grad = torch.randn_like(out)
    return lambda: torch.autograd.grad(out, inputs, grad, retain_graph=True)


def main():
    shapes, precisions = parse_args()
    results = []
    for batch, heads, seq, head_dim, causal in shapes:
        for precision in precisions:
            q, k, v = (torch.randn(batch, heads, seq, head_dim, device="cuda", dtype=DTYPES[precision])
                       for _ in range(3))
            for library, backend in BACKENDS.items():
                entry = {"batch": batch, "heads": heads, "seq": seq, "head_dim": head_dim, "causal": causal,
                         "precision": precision, "library": library}
                try:
                    with sdpa_kernel(backend):
                        ns = timed(call(q, k, v, bool(causal)), flush_l2=False)
                    entry.update(median_ns=ns, tflops=flops(batch, heads, seq, head_dim, causal) / ns / 1e3)
                except Exception as e:  # a case that fails still leaves the others
                    entry["error"] = f"{type(e).__name__}: {e}"[:300]
                results.append(entry)
            del q, k, v
            torch.cuda.empty_cache()
    print_results(results)


if __name__ == "__main__":
    main()
