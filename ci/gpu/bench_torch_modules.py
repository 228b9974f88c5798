"""ktune's PyTorch modules against PyTorch's own, for `ci/gpu-check torch`, on one card in one
process: each module (ktune.nn) against the PyTorch module it replaces, eager, eager replayed
from a CUDA graph and under torch.compile; then a decoder block (RMSNorm, grouped-query
attention with QK-norm and RoPE, SwiGLU MLP, residuals) written once in PyTorch and once with
ktune's ops, at batch x seq 8x2048, hidden 4096, 32 heads of 128 over 8 KV heads, MLP 14336,
bf16. ktune's RoPE comes fused with a per-head RMSNorm (rmsnorm_rope), so both blocks normalise
q and k per head before rotating them (as Qwen3 and OLMo 2 do); Llama's block has no QK-norm.

Times are medians of CUDA events around one forward (warm L2, as a model runs), in ns.
Prints one JSON object: {"device", "torch", "results": {CASE: {ROUTE_ns: ...}}}; a route that
fails records ROUTE_error instead.
Usage: python3 -m ci.gpu.bench_torch_modules [--quick]
"""
import json
import sys

import torch
import torch.nn.functional as F
from torch import nn

import ktune
from .against_pytorch import graphed
from .baseline_families import timed

DTYPE = torch.bfloat16


def routes(pytorch_fn, ktune_fn, compile_too=True):
    """Each route's median ns, or its error (torch.compile's only when compile_too)."""
    out = {}
    for name, make in (("eager", lambda: pytorch_fn), ("eager_graph", lambda: graphed(pytorch_fn)),
                       ("compiled", lambda: torch.compile(pytorch_fn)), ("ktune", lambda: ktune_fn),
                       ("ktune_graph", lambda: graphed(ktune_fn))):
        if name == "compiled" and not compile_too:
            continue
        try:
            with torch.no_grad():
                out[f"{name}_ns"] = timed(make(), samples=30, flush_l2=False)
        except Exception as e:  # noqa: BLE001 - a route that cannot run is reported, not fatal
            out[f"{name}_error"] = f"{type(e).__name__}: {e}"[:300]
    try:
        with torch.no_grad():
            got, want = ktune_fn(), pytorch_fn()
        got = got[0] if isinstance(got, tuple) else got
        want = want[0] if isinstance(want, tuple) else want
        out["relative_l2"] = float((got.float() - want.float()).norm() / want.float().norm())
    except Exception as e:  # noqa: BLE001 - reported with the case, the other cases still run
        out["relative_l2_error"] = f"{type(e).__name__}: {e}"[:300]
    return out


def module_cases(tokens):
    """(name, PyTorch module call, ktune module call) for each module of ktune.nn."""
    x = torch.randn(tokens, 4096, device="cuda", dtype=DTYPE)
    layer_norm = nn.LayerNorm(4096).cuda().to(DTYPE)
    fused_norm = ktune.nn.LayerNorm(4096).cuda().to(DTYPE)
    fused_norm.load_state_dict(layer_norm.state_dict())
    rms_weight = torch.rand(4096, device="cuda", dtype=DTYPE) + 0.5
    rms = ktune.nn.RMSNorm(4096).cuda().to(DTYPE)
    rms.weight.data.copy_(rms_weight)
    yield ("RMSNorm", lambda: x * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-6).to(DTYPE) * rms_weight,
           lambda: rms(x))
    yield "LayerNorm", lambda: layer_norm(x), lambda: fused_norm(x)
    seq = x.view(tokens // 1024, 1024, 4096) if tokens >= 1024 else x.view(1, tokens, 4096)
    attention = nn.MultiheadAttention(4096, 32, batch_first=True).cuda().to(DTYPE).eval()
    fused_attention = ktune.nn.FusedAttention(4096, 32, batch_first=True).cuda().to(DTYPE).eval()
    fused_attention.load_state_dict(attention.state_dict())
    yield ("MultiheadAttention", lambda: attention(seq, seq, seq, need_weights=False)[0],
           lambda: fused_attention(seq, seq, seq, need_weights=False)[0])
    mlp = nn.Sequential(nn.Linear(4096, 16384), nn.GELU(), nn.Linear(16384, 4096)).cuda().to(DTYPE)
    fused_mlp = ktune.nn.FusedFFN(4096, 16384).cuda().to(DTYPE)
    fused_mlp.load_state_dict({"fc1.weight": mlp[0].weight, "fc1.bias": mlp[0].bias, "fc2.weight": mlp[2].weight,
                               "fc2.bias": mlp[2].bias})
    yield "FFN (Linear-GELU-Linear)", lambda: mlp(x), lambda: fused_mlp(x)
    gate, up, down = (nn.Linear(4096, 14336, bias=False).cuda().to(DTYPE), nn.Linear(4096, 14336, bias=False).cuda().to(DTYPE),
                      nn.Linear(14336, 4096, bias=False).cuda().to(DTYPE))
    swiglu = ktune.nn.SwiGLU(4096, 14336).cuda().to(DTYPE)
    swiglu.load_state_dict({"gate_proj.weight": gate.weight, "up_proj.weight": up.weight,
                            "down_proj.weight": down.weight})
    yield "SwiGLU MLP", lambda: down(F.silu(gate(x)) * up(x)), lambda: swiglu(x)
    image = torch.randn(8, 64, 256, 256, device="cuda", dtype=DTYPE)
    instance = nn.InstanceNorm2d(64, affine=True).cuda().to(DTYPE)
    fused_instance = ktune.nn.FusedInstanceNorm2d(64, affine=True).cuda().to(DTYPE)
    fused_instance.load_state_dict(instance.state_dict())
    yield "InstanceNorm2d 8x64x256x256", lambda: instance(image), lambda: fused_instance(image)


class DecoderWeights:
    def __init__(self, hidden=4096, heads=32, kv_heads=8, head_dim=128, mlp=14336, seq=2048, batch=8):
        def w(*shape, scale):
            return (torch.randn(*shape, device="cuda", dtype=torch.float32) * scale).to(DTYPE)
        self.heads, self.kv_heads, self.head_dim, self.seq, self.batch = heads, kv_heads, head_dim, seq, batch
        self.norm1 = torch.rand(hidden, device="cuda", dtype=DTYPE) + 0.5
        self.norm2 = torch.rand(hidden, device="cuda", dtype=DTYPE) + 0.5
        self.qk_norm = torch.rand(head_dim, device="cuda", dtype=DTYPE) + 0.5
        self.wqkv = w((heads + 2 * kv_heads) * head_dim, hidden, scale=hidden ** -0.5)
        self.wo = w(hidden, heads * head_dim, scale=(heads * head_dim) ** -0.5)
        self.w_gate_up = w(2 * mlp, hidden, scale=hidden ** -0.5)
        self.w_down = w(hidden, mlp, scale=mlp ** -0.5)
        angle = torch.arange(seq, device="cuda", dtype=torch.float32)[:, None] * (
            10000.0 ** (-torch.arange(0, head_dim, 2, device="cuda", dtype=torch.float32) / head_dim))
        self.cos, self.sin = angle.cos().to(DTYPE), angle.sin().to(DTYPE)
        # Per token of the whole batch (rms_norm_rope rotates row i by cos[i], sin[i]).
        self.cos_rows, self.sin_rows = self.cos.repeat(batch, 1).contiguous(), self.sin.repeat(batch, 1).contiguous()


def pytorch_block(x, p):
    """The block in PyTorch: SDPA (flash/cuDNN) for the attention, cuBLASLt for the projections."""
    b, s, hidden = x.shape
    h = x * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-6).to(DTYPE) * p.norm1
    qkv = F.linear(h, p.wqkv).view(b, s, p.heads + 2 * p.kv_heads, p.head_dim)
    q, k, v = qkv.split([p.heads, p.kv_heads, p.kv_heads], dim=2)

    def norm_rope(t):
        t = t * torch.rsqrt(t.float().pow(2).mean(-1, keepdim=True) + 1e-6).to(DTYPE) * p.qk_norm
        half = p.head_dim // 2
        cos, sin = p.cos[None, :, None, :], p.sin[None, :, None, :]
        return torch.cat((t[..., :half] * cos - t[..., half:] * sin, t[..., half:] * cos + t[..., :half] * sin), -1)

    q, k = norm_rope(q).transpose(1, 2), norm_rope(k).transpose(1, 2)
    v = v.transpose(1, 2)
    group = p.heads // p.kv_heads
    o = F.scaled_dot_product_attention(q, k.repeat_interleave(group, 1), v.repeat_interleave(group, 1), is_causal=True)
    x = x + F.linear(o.transpose(1, 2).reshape(b, s, hidden), p.wo)
    h = x * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-6).to(DTYPE) * p.norm2
    gate, up = F.linear(h, p.w_gate_up).chunk(2, dim=-1)
    return x + F.linear(F.silu(gate) * up, p.w_down)


def ktune_block(x, p):
    """The same block on ktune's kernels: RMSNorm, one QKV GEMM, QK-norm + RoPE fused, flash
    attention (GQA, causal), the output projection adding the residual in its epilogue, RMSNorm,
    the gate/up GEMM, SwiGLU, the down projection adding the residual."""
    b, s, hidden = x.shape
    qkv = ktune.linear(ktune.rms_norm(x, p.norm1), p.wqkv).view(b * s, p.heads + 2 * p.kv_heads, p.head_dim)
    q = ktune.rms_norm_rope(qkv[:, :p.heads], p.qk_norm, p.cos_rows, p.sin_rows)
    k = ktune.rms_norm_rope(qkv[:, p.heads:p.heads + p.kv_heads], p.qk_norm, p.cos_rows, p.sin_rows)
    v = qkv[:, p.heads + p.kv_heads:]

    def heads_first(t, n):
        return t.view(b, s, n, p.head_dim).transpose(1, 2).contiguous()

    o = ktune.flash_attention(heads_first(q, p.heads), heads_first(k, p.kv_heads), heads_first(v, p.kv_heads),
                              causal=True)
    x = ktune.linear(o.transpose(1, 2).reshape(b, s, hidden), p.wo, residual=x)
    hidden_act = ktune.swiglu(ktune.linear(ktune.rms_norm(x, p.norm2), p.w_gate_up))
    return ktune.linear(hidden_act, p.w_down, residual=x)


def main(argv):
    quick = "--quick" in argv
    results = {}
    for name, pytorch_fn, ktune_fn in module_cases(2048 if quick else 8192):
        results[name] = routes(pytorch_fn, ktune_fn)
        print(name, json.dumps(results[name]), file=sys.stderr, flush=True)
    p = DecoderWeights(batch=2 if quick else 8)
    x = torch.randn(p.batch, p.seq, 4096, device="cuda", dtype=DTYPE)
    name = f"decoder block {p.batch}x{p.seq} hidden 4096, GQA 32/8, MLP 14336"
    results[name] = routes(lambda: pytorch_block(x, p), lambda: ktune_block(x, p))
    print(name, json.dumps(results[name]), file=sys.stderr, flush=True)
    print(json.dumps({"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
                      "ktune_library": ktune.library_path(), "results": results}, indent=1))


if __name__ == "__main__":
    main(sys.argv[1:])
