"""ktune's PyTorch modules against PyTorch's own, for `ci/gpu-check torch`, on one card in one
process: each module (ktune.nn) against the PyTorch module it replaces, eager, eager replayed
from a CUDA graph and under torch.compile; then two decoder blocks (RMSNorm, grouped-query
attention with RoPE, SwiGLU MLP, residuals), each written once in PyTorch and once with ktune's
ops, at batch x seq 8x2048, hidden 4096, 32 heads of 128 over 8 KV heads, MLP 14336, bf16:
- Llama's: ktune's split_heads rotates q and k and lays the heads out for attention in one
  launch, merge_heads lays attention's output back out as token rows; PyTorch's SDPA takes the
  grouped kv heads as they are (enable_gqa, PyTorch 2.5 and later);
- with QK-norm (Qwen3, OLMo 2): q and k normalised per head before the rotation; ktune's
  split_heads lays out the heads, rmsnorm_rope normalises and rotates heads-first q and k;
  PyTorch's kv heads repeated for SDPA.

Times are medians of CUDA events around one forward (warm L2, as a model runs), in ns, the
routes' forwards interleaved.
Prints one JSON object: {"device", "torch", "results": {CASE: {ROUTE_ns: ...}}}; a route that
fails records ROUTE_error instead. With KTUNE_TORCH_REFINE=N (and KTUNE_DB), each block's GEMM and
attention calls first take whichever of the database's N fastest configs makes the block fastest
(ktune.refine; CASE's "refined" lists them).
Usage: python3 -m ci.gpu.bench_torch_modules [--quick]
"""
import json
import os
import statistics
import sys

import torch
import torch.nn.functional as F
from torch import nn

import ktune
from .against_pytorch import graphed

DTYPE = torch.bfloat16


def routes(pytorch_fn, ktune_fn, compile_too=True, samples=30):
    """Each route's median ns, or its error (torch.compile's only when compile_too). The routes'
    samples are interleaved, one forward of each in turn (the order rotating), so that a card
    whose clock falls as it heats does not favour the route timed first."""
    out = {}
    runs = {}
    for name, make in (("eager", lambda: pytorch_fn), ("eager_graph", lambda: graphed(pytorch_fn)),
                       ("compiled", lambda: torch.compile(pytorch_fn)), ("ktune", lambda: ktune_fn),
                       ("ktune_graph", lambda: graphed(ktune_fn))):
        if name == "compiled" and not compile_too:
            continue
        try:
            with torch.no_grad():
                runs[name] = make()
                for _ in range(5):  # warm-up: compilation, first-use tuning, allocations
                    runs[name]()
        except Exception as e:  # noqa: BLE001 - a route that cannot run is reported, not fatal
            out[f"{name}_error"] = f"{type(e).__name__}: {e}"[:300]
    times = {name: [] for name in runs}
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    with torch.no_grad():
        for sample in range(samples):
            names = list(times)
            for name in names[sample % len(names):] + names[:sample % len(names)]:
                if name not in runs:
                    continue
                try:
                    start.record()
                    runs[name]()
                    stop.record()
                    stop.synchronize()
                    times[name].append(start.elapsed_time(stop) * 1e6)
                except Exception as e:  # noqa: BLE001 - the route stops, the others go on
                    out[f"{name}_error"] = f"{type(e).__name__}: {e}"[:300]
                    del runs[name]
    for name, measured in times.items():
        if name in runs and measured:
            out[f"{name}_ns"] = statistics.median(measured)
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
    yield "RMSNorm", lambda: _pytorch_rms_norm(x, rms_weight), lambda: rms(x)
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
        # Per head vector of heads-first q and k, [batch, heads, seq, head_dim] as rows (rms_norm_rope
        # rotates row i by cos[i], sin[i]): row i is position i % seq.
        self.cos_q, self.sin_q = self.cos.repeat(batch * heads, 1), self.sin.repeat(batch * heads, 1)
        self.cos_kv, self.sin_kv = self.cos.repeat(batch * kv_heads, 1), self.sin.repeat(batch * kv_heads, 1)


def _pytorch_rms_norm(t, weight):
    return t * torch.rsqrt(t.float().pow(2).mean(-1, keepdim=True) + 1e-6).to(DTYPE) * weight


def _pytorch_rope(t, p):
    """NeoX RoPE of t [batch, seq, heads, head_dim] by the token's index in its sequence."""
    half = p.head_dim // 2
    cos, sin = p.cos[None, :, None, :], p.sin[None, :, None, :]
    return torch.cat((t[..., :half] * cos - t[..., half:] * sin, t[..., half:] * cos + t[..., :half] * sin), -1)


def _pytorch_mlp(x, p):
    gate, up = F.linear(_pytorch_rms_norm(x, p.norm2), p.w_gate_up).chunk(2, dim=-1)
    return x + F.linear(F.silu(gate) * up, p.w_down)


def pytorch_llama_block(x, p):
    """Llama's block in PyTorch: SDPA over the grouped kv heads, cuBLASLt for the projections."""
    b, s, hidden = x.shape
    q, k, v = F.linear(_pytorch_rms_norm(x, p.norm1), p.wqkv).view(b, s, p.heads + 2 * p.kv_heads, p.head_dim).split(
        [p.heads, p.kv_heads, p.kv_heads], dim=2)
    o = F.scaled_dot_product_attention(_pytorch_rope(q, p).transpose(1, 2), _pytorch_rope(k, p).transpose(1, 2),
                                       v.transpose(1, 2), is_causal=True, enable_gqa=True)
    return _pytorch_mlp(x + F.linear(o.transpose(1, 2).reshape(b, s, hidden), p.wo), p)


def ktune_llama_block(x, p):
    """Llama's block on ktune's kernels: RMSNorm, the QKV GEMM, split_heads (RoPE and the heads'
    layout in one launch), flash attention over the grouped kv heads, merge_heads, the output
    projection adding the residual in its epilogue, then the MLP."""
    qkv = ktune.linear(ktune.rms_norm(x, p.norm1), p.wqkv)
    q, k, v = ktune.split_heads(qkv, p.heads, p.kv_heads, p.cos, p.sin)
    o = ktune.flash_attention(q, k, v, causal=True)
    return _ktune_mlp(ktune.linear(ktune.merge_heads(o), p.wo, residual=x), p)


def _ktune_mlp(x, p):
    """RMSNorm, the gate/up GEMM, SwiGLU, the down projection adding the residual."""
    hidden_act = ktune.swiglu(ktune.linear(ktune.rms_norm(x, p.norm2), p.w_gate_up))
    return ktune.linear(hidden_act, p.w_down, residual=x)


def pytorch_block(x, p):
    """The block with QK-norm in PyTorch: SDPA (flash/cuDNN) for the attention, cuBLASLt for the
    projections."""
    b, s, hidden = x.shape
    qkv = F.linear(_pytorch_rms_norm(x, p.norm1), p.wqkv).view(b, s, p.heads + 2 * p.kv_heads, p.head_dim)
    q, k, v = qkv.split([p.heads, p.kv_heads, p.kv_heads], dim=2)
    q, k = (_pytorch_rope(_pytorch_rms_norm(t, p.qk_norm), p).transpose(1, 2) for t in (q, k))
    v = v.transpose(1, 2)
    group = p.heads // p.kv_heads
    o = F.scaled_dot_product_attention(q, k.repeat_interleave(group, 1), v.repeat_interleave(group, 1), is_causal=True)
    return _pytorch_mlp(x + F.linear(o.transpose(1, 2).reshape(b, s, hidden), p.wo), p)


def ktune_block(x, p):
    """The block with QK-norm on ktune's kernels: RMSNorm, one QKV GEMM, split_heads (the heads laid
    out for attention, unrotated), QK-norm and RoPE fused on the heads-first q and k
    (rmsnorm_rope, each row one head of one token), flash attention (GQA, causal), merge_heads,
    the output projection adding the residual in its epilogue, the MLP."""
    q, k, v = ktune.split_heads(ktune.linear(ktune.rms_norm(x, p.norm1), p.wqkv), p.heads, p.kv_heads)
    q = ktune.rms_norm_rope(q.view(-1, 1, p.head_dim), p.qk_norm, p.cos_q, p.sin_q).view(q.shape)
    k = ktune.rms_norm_rope(k.view(-1, 1, p.head_dim), p.qk_norm, p.cos_kv, p.sin_kv).view(k.shape)
    o = ktune.flash_attention(q, k, v, causal=True)
    return _ktune_mlp(ktune.linear(ktune.merge_heads(o), p.wo, residual=x), p)


def main(argv):
    quick = "--quick" in argv
    results = {}
    for name, pytorch_fn, ktune_fn in module_cases(2048 if quick else 8192):
        results[name] = routes(pytorch_fn, ktune_fn)
        print(name, json.dumps(results[name]), file=sys.stderr, flush=True)
    p = DecoderWeights(batch=2 if quick else 8)
    x = torch.randn(p.batch, p.seq, 4096, device="cuda", dtype=DTYPE)
    for name, pytorch_fn, ktune_fn in (
            (f"Llama decoder block {p.batch}x{p.seq} hidden 4096, GQA 32/8, MLP 14336", pytorch_llama_block,
             ktune_llama_block),
            (f"decoder block with QK-norm {p.batch}x{p.seq} hidden 4096, GQA 32/8, MLP 14336", pytorch_block,
             ktune_block)):
        refined = refine_in_place(lambda: ktune_fn(x, p))
        results[name] = routes(lambda: pytorch_fn(x, p), lambda: ktune_fn(x, p))
        if refined is not None:
            results[name]["refined"] = refined
        print(name, json.dumps(results[name]), file=sys.stderr, flush=True)
    print(json.dumps({"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
                      "ktune_library": ktune.library_path(), "results": results}, indent=1))


def refine_in_place(block):
    """With KTUNE_TORCH_REFINE=N and a database in use (KTUNE_DB): each GEMM and attention call of
    the block runs whichever of the database's N fastest configs for it makes the whole block
    fastest (ktune.refine). Returns, per call, the shape, the configs tried with the block's
    median ms and the one kept; None when off."""
    top = int(os.environ.get("KTUNE_TORCH_REFINE", "0"))
    if top < 2 or not ktune.settings()["db"]:
        return None
    summary = []
    for entry in ktune.refine(block, top=top, samples=7, families=["gemm", "flash_attention"]):
        summary.append({"family": entry["call"]["family"], "dims": entry["call"]["dims"], "kept": entry["chosen"],
                        "block_ms": [round(c["median_s"] * 1e3, 3) for c in entry["candidates"]]})
        print("refined", json.dumps(summary[-1]), file=sys.stderr, flush=True)
    return summary


if __name__ == "__main__":
    main(sys.argv[1:])
