"""PyTorch's side of `ci/gpu-check serving`, timed the way ktune times (CUDA events around one
call, L2 flushed before each sample, the median):
  copy:BYTES             a copy moving BYTES (BYTES/2 read, BYTES/2 written): the bandwidth a
                         memory-bound kernel of that size is held against
  grouped:E:M:N:K        the experts' GEMMs as a loop of torch.matmul (eager, and in a CUDA
                         graph), with grouped_gemm's group sizes (kernels/grouped_gemm/family.cpp)
                         over M rows; and one dense torch.matmul of the same M x N x K
  route:T:E:K:H          MoE routing in PyTorch: softmax, top-k, renormalized weights, a stable
                         sort of the choices by expert and the gather of x (eager, torch.compile)
  combine:T:K:H          the weighted gather back: (expert_out[rows] * weights).sum over k
                         (eager, in a CUDA graph, torch.compile)
  gathered:B:H:KV:D:P:T  decode attention over paged_attention's cache (pages of P tokens in a
                         shuffled pool, ragged lengths as kernels/paged_attention/paged_attention.hpp
                         draws them) the PyTorch way: the block table's pages gathered into
                         contiguous K and V, then SDPA with a mask of each sequence's tokens
                         (gather_sdpa, eager and in a CUDA graph); and SDPA alone over K and V
                         gathered beforehand (sdpa)
Prints {"device", "torch", "precision", "results": {CASE: {"<route>_ns" or "<route>_error"}}}.
Usage: python3 -m ci.gpu.baseline_serving PRECISION CASE..."""
import sys

import torch

from .against_pytorch import baseline_main, graphed, timed_cases
from .baseline_families import timed
from .phase_serving import group_sizes

DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}


def measure(text, precision):
    dtype = DTYPES[precision]
    kind, *numbers = text.split(":")
    n = [int(v) for v in numbers]
    if kind == "copy":
        source = torch.empty(n[0] // 2, dtype=torch.uint8, device="cuda")
        target = torch.empty_like(source)
        return timed_cases((("copy", lambda: lambda: target.copy_(source)),), timed)
    if kind == "grouped":
        experts, m, cols, depth = n
        a = torch.randn(m, depth, device="cuda", dtype=dtype)
        b = torch.randn(experts, cols, depth, device="cuda", dtype=dtype)
        parts = [part for part in torch.split(a, group_sizes(m, experts))]
        d = torch.empty(m, cols, device="cuda", dtype=dtype)
        outs = list(torch.split(d, group_sizes(m, experts)))

        def loop():
            for g, part in enumerate(parts):
                if part.shape[0]:
                    torch.matmul(part, b[g].t(), out=outs[g])
        return timed_cases((("loop", lambda: loop), ("loop_graph", lambda: graphed(loop)),
                            ("dense", lambda: lambda: torch.matmul(a, b[0].t(), out=d))),
                           lambda fn: timed(fn, samples=20, flush_l2=False))
    if kind == "route":
        tokens, experts, k, hidden = n
        logits = torch.randn(tokens, experts, device="cuda", dtype=dtype)
        x = torch.randn(tokens, hidden, device="cuda", dtype=dtype)

        def route():
            weights, ids = torch.topk(torch.softmax(logits.float(), -1), k, -1)
            weights = weights / weights.sum(-1, keepdim=True)
            order = torch.argsort(ids.flatten(), stable=True)
            return x.index_select(0, order // k), weights, torch.bincount(ids.flatten(), minlength=experts)
        return timed_cases((("eager", lambda: route), ("compiled", lambda: torch.compile(route))), timed)
    if kind == "combine":
        tokens, k, hidden = n
        expert_out = torch.randn(tokens * k, hidden, device="cuda", dtype=dtype)
        rows = torch.randperm(tokens * k, device="cuda").view(tokens, k)
        weights = torch.rand(tokens, k, device="cuda")

        def combine():
            return (expert_out[rows].float() * weights[..., None]).sum(1).to(dtype)
        return timed_cases((("eager", lambda: combine), ("eager_graph", lambda: graphed(combine)),
                            ("compiled", lambda: torch.compile(combine))), timed)
    if kind == "gathered":
        return gathered_attention(dtype, *n)
    raise ValueError(f"unknown case {text}")


def sequence_length(b, seq_kv):
    """kernels/paged_attention/paged_attention.hpp's sequence_length: seq_kv for the first
    sequence, then a spread over the last quarter."""
    return max(1, seq_kv - (b * 7919) % (seq_kv // 4 + 1))


def gathered_attention(dtype, batch, heads, kv_heads, head_dim, page_size, seq_kv):
    import torch.nn.functional as F
    max_pages = (seq_kv + page_size - 1) // page_size
    k_cache = torch.randn(batch * max_pages, page_size, kv_heads, head_dim, device="cuda", dtype=dtype)
    v_cache = torch.randn_like(k_cache)
    block_table = torch.randperm(batch * max_pages, device="cuda").view(batch, max_pages)
    q = torch.randn(batch, heads, 1, head_dim, device="cuda", dtype=dtype)
    lengths = torch.tensor([sequence_length(b, seq_kv) for b in range(batch)], device="cuda")
    tokens = max_pages * page_size
    mask = (torch.arange(tokens, device="cuda")[None, :] < lengths[:, None])[:, None, None, :]

    def gather(cache):  # [batch, kv_heads, tokens, head_dim]
        return cache[block_table].view(batch, tokens, kv_heads, head_dim).transpose(1, 2)

    def gather_sdpa():
        return F.scaled_dot_product_attention(q, gather(k_cache), gather(v_cache), attn_mask=mask, enable_gqa=True)
    k, v = gather(k_cache).contiguous(), gather(v_cache).contiguous()
    return timed_cases((("gather_sdpa", lambda: gather_sdpa), ("gather_sdpa_graph", lambda: graphed(gather_sdpa)),
                        ("sdpa", lambda: lambda: F.scaled_dot_product_attention(q, k, v, attn_mask=mask,
                                                                                enable_gqa=True))), timed)


if __name__ == "__main__":
    baseline_main(sys.argv[1:], measure)
