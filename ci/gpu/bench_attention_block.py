"""ktune.attention_block against PyTorch's attention blocks, for `ci/gpu-check attention_block`, on
one card in one process (issue 36's bar: >= 1.0x nn.MultiheadAttention and SDPA-based blocks):
  mha  - x + nn.MultiheadAttention(x, x, x) (heads of 128, biases), against ktune's block with
         residual;
  gqa  - a Llama-style block: QKV projection, NeoX RoPE, causal SDPA over grouped-query heads (4 query
         heads per KV head), output projection and residual, against ktune's block with the same
         weights.
Each at tokens x hidden of KTUNE_BLOCK_SHAPES (default: tokens 1, 256, 4096 and 16384 at hidden 4096
and 8192; 16384 tokens as 4 sequences of 4096, fewer as one sequence), bf16: PyTorch eager, eager
replayed from a CUDA graph and (KTUNE_BLOCK_COMPILE=1, the default) torch.compile, and ktune's block
alone and from a CUDA graph. Times are medians of CUDA events around one forward (warm L2), in ns.
Prints one JSON object: {"device", "torch", "results": {CASE: {ROUTE_ns: ..., "relative_l2": ...}}}.
Usage: python3 -m ci.gpu.bench_attention_block
"""
import json
import os
import sys

import torch
import torch.nn.functional as F
from torch import nn

import ktune
from .bench_torch_modules import DTYPE, routes



def _sdpa_takes_gqa():
    """Whether this PyTorch's SDPA reads grouped-query heads itself (enable_gqa, PyTorch 2.5)."""
    try:
        t = torch.zeros(1, 2, 1, 8, device="cuda", dtype=DTYPE)
        F.scaled_dot_product_attention(t, t[:, :1], t[:, :1], enable_gqa=True)
        return True
    except TypeError:
        return False


GQA_SDPA = _sdpa_takes_gqa()
SHAPES = "1x4096 256x4096 4096x4096 16384x4096 1x8192 256x8192 4096x8192 16384x8192"


def split(tokens):
    """(batch, seq): 16384 tokens as 4 sequences of 4096, fewer as one sequence."""
    return (tokens // 4096, 4096) if tokens > 4096 and tokens % 4096 == 0 else (1, tokens)


def mha_case(batch, seq, hidden):
    heads = hidden // 128
    attention = nn.MultiheadAttention(hidden, heads, batch_first=True).cuda().to(DTYPE).eval()
    x = torch.randn(batch, seq, hidden, device="cuda", dtype=DTYPE)
    w, b, wo, bo = (attention.in_proj_weight, attention.in_proj_bias, attention.out_proj.weight,
                    attention.out_proj.bias)
    return (lambda: x + attention(x, x, x, need_weights=False)[0],
            lambda: ktune.attention_block(x, w, b, wo, bo, heads, heads, False, None, None, True))


def gqa_case(batch, seq, hidden):
    heads, head_dim = hidden // 128, 128
    kv_heads = max(1, heads // 4)
    width = (heads + 2 * kv_heads) * head_dim
    x = torch.randn(batch, seq, hidden, device="cuda", dtype=DTYPE)
    w_qkv = (torch.randn(width, hidden, device="cuda") * hidden ** -0.5).to(DTYPE)
    w_o = (torch.randn(hidden, heads * head_dim, device="cuda") * (heads * head_dim) ** -0.5).to(DTYPE)
    angle = torch.arange(seq, device="cuda", dtype=torch.float32)[:, None] * (
        10000.0 ** (-torch.arange(0, head_dim, 2, device="cuda", dtype=torch.float32) / head_dim))
    cos, sin = angle.cos().to(DTYPE), angle.sin().to(DTYPE)
    half = head_dim // 2

    def rope(t):  # [batch, seq, heads, head_dim], NeoX rotate_half
        c, s = cos.view(1, seq, 1, half), sin.view(1, seq, 1, half)
        return torch.cat((t[..., :half] * c - t[..., half:] * s, t[..., half:] * c + t[..., :half] * s), dim=-1)

    def pytorch_block():
        qkv = F.linear(x, w_qkv).view(batch, seq, heads + 2 * kv_heads, head_dim)
        q, k, v = qkv.split([heads, kv_heads, kv_heads], dim=2)
        q, k, v = rope(q).transpose(1, 2), rope(k).transpose(1, 2), v.transpose(1, 2)
        if GQA_SDPA:
            o = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        else:  # a PyTorch before 2.5: the KV heads repeated for SDPA
            k, v = k.repeat_interleave(heads // kv_heads, 1), v.repeat_interleave(heads // kv_heads, 1)
            o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return x + F.linear(o.transpose(1, 2).reshape(batch, seq, heads * head_dim), w_o)

    return (pytorch_block,
            lambda: ktune.attention_block(x, w_qkv, None, w_o, None, heads, kv_heads, True, cos, sin, True))


def main(argv):
    shapes = os.environ.get("KTUNE_BLOCK_SHAPES", SHAPES).split()
    compile_too = os.environ.get("KTUNE_BLOCK_COMPILE", "1") == "1"
    results = {}
    for shape in shapes:
        tokens, hidden = (int(v) for v in shape.split("x"))
        batch, seq = split(tokens)
        for kind, make in (("mha", mha_case), ("gqa", gqa_case)):
            name = f"{kind} {batch}x{seq} hidden {hidden}"
            try:
                pytorch_fn, ktune_fn = make(batch, seq, hidden)
                results[name] = routes(pytorch_fn, ktune_fn, compile_too=compile_too)
            except Exception as e:  # noqa: BLE001 - a case that cannot be built is reported, the others run
                results[name] = {"error": f"{type(e).__name__}: {e}"[:300]}
            print(name, json.dumps(results[name]), file=sys.stderr, flush=True)
            torch.cuda.empty_cache()
    print(json.dumps({"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
                      "ktune_library": ktune.library_path(), "results": results}, indent=1))


if __name__ == "__main__":
    main(sys.argv[1:])
