"""PyTorch's formula of each of ktune's ops: what autograd recomputes for a backward the kernels
do not have (ktune.ops), what a module falls back to, and what the tests compare the kernels
against. REFERENCES maps an op's name to its formula, called with the op's own arguments.

The constants are the kernels' own: RMSNorm's epsilon is 1e-6 (also in rms_norm_rope), LayerNorm's
and InstanceNorm's 1e-5; softmax_dropout drops with p = 0.1 under the call's Philox seed and
offset (its rng tensor), so its formula takes the same rng and reads the mask off the op itself.
"""
import math

import torch
import torch.nn.functional as F

RMS_NORM_EPS = 1e-6
LAYER_NORM_EPS = 1e-5
INSTANCE_NORM_EPS = 1e-5
SOFTMAX_DROPOUT_P = 0.1


def _rotate(x, cos, sin):
    half = x.shape[-1] // 2
    shape = x.shape[:-2] + (1, half)
    cos, sin = cos.reshape(shape), sin.reshape(shape)
    first, second = x[..., :half], x[..., half:]
    return torch.cat((first * cos - second * sin, second * cos + first * sin), dim=-1)


def _softmax_dropout_mask(x, rng):
    # The kernels' mask depends only on the element's index and rng: read it off the op itself on
    # zeros (an equal softmax everywhere, so only the dropped elements are 0).
    from .ops import softmax_dropout_op  # the op module imports this one
    uniform = torch.zeros(x.shape, dtype=torch.float32, device=x.device)
    return (softmax_dropout_op(uniform, rng.to(torch.int32)) != 0).to(x.dtype)  # rng as given, even in float64


REFERENCES = {
    "rms_norm": lambda x, w: x * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + RMS_NORM_EPS).to(x.dtype) * w,
    "layer_norm": lambda x, w, b: F.layer_norm(x, (x.shape[-1],), w, b, LAYER_NORM_EPS),
    "softmax": lambda x: torch.softmax(x, -1),
    "softmax_dropout": lambda x, rng: torch.softmax(x, -1) * _softmax_dropout_mask(x, rng) / (1 - SOFTMAX_DROPOUT_P),
    "swiglu": lambda x: F.silu(x[..., : x.shape[-1] // 2]) * x[..., x.shape[-1] // 2:],
    "geglu": lambda x: F.gelu(x[..., : x.shape[-1] // 2]) * x[..., x.shape[-1] // 2:],
    "rms_norm_rope": lambda x, w, cos, sin: _rotate(REFERENCES["rms_norm"](x, w), cos, sin),
    "instance_norm": lambda x, w, b: F.instance_norm(x, weight=w, bias=b, eps=INSTANCE_NORM_EPS),
    "layer_norm_linear": lambda x, g, b, w, bias: F.linear(F.layer_norm(x, (x.shape[-1],), g, b, LAYER_NORM_EPS), w,
                                                           bias),
}


def _linear_reference(x, weight, bias, residual, activation):
    y = F.linear(x, weight, bias)
    if activation == "gelu":
        y = F.gelu(y)
    elif activation == "silu":
        y = F.silu(y)
    return y if residual is None else y + residual


def _ffn_reference(x, w1, b1, w2, b2, activation):
    hidden = F.linear(x, w1, b1)
    hidden = {"gelu": lambda h: F.gelu(h), "gelu_tanh": lambda h: F.gelu(h, approximate="tanh"),
              "silu": F.silu}[activation](hidden)
    return F.linear(hidden, w2, b2)


def _masked_attention(q, k, v, allowed, scale):
    """softmax(scale·QKᵀ)V (grouped-query heads) where `allowed` (broadcast to [.., seq_q, seq_kv],
    None for every key) says which keys each query row sees, with the fp32 log-sum-exp. A row that
    sees no key gets o = 0 and lse = +inf, as the kernels give, and no NaN in the gradients."""
    group = q.shape[1] // k.shape[1]
    k, v = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    work = torch.float64 if q.dtype == torch.float64 else torch.float32
    scores = (q.to(work) @ k.to(work).transpose(-1, -2)) * scale
    if allowed is None:
        return (torch.softmax(scores, dim=-1) @ v.to(work)).to(q.dtype), torch.logsumexp(scores, dim=-1).float()
    scores = scores.masked_fill(~allowed, float("-inf"))
    seen = allowed.any(-1)
    lse = torch.where(seen, torch.logsumexp(scores, dim=-1), torch.full_like(scores[..., 0], float("inf")))
    p = torch.softmax(scores.masked_fill(~seen[..., None], 0.0), dim=-1) * seen[..., None]
    return (p @ v.to(work)).to(q.dtype), lse.float()


def _causal_mask(seq_q, seq_kv, device):
    """Query i sees key j when j <= i + seq_kv - seq_q (bottom-right, as the kernels)."""
    return torch.ones(seq_q, seq_kv, dtype=torch.bool, device=device).tril(seq_kv - seq_q)


def _attention_reference(q, k, v, causal, scale):
    return _masked_attention(q, k, v, _causal_mask(q.shape[2], k.shape[2], q.device) if causal else None, scale)


def _paged_attention_reference(q, k_cache, v_cache, block_table, seq_lens, scale):
    batch, heads, head_dim = q.shape
    page_size, kv_heads = k_cache.shape[1], k_cache.shape[2]
    scale = 1.0 / math.sqrt(head_dim) if scale is None else scale
    outputs, lses = [], []
    for b in range(batch):
        length = int(seq_lens[b])
        pages = block_table[b, :(length + page_size - 1) // page_size].long()

        def cached(cache):  # [length, heads, head_dim], each kv head repeated for its query heads
            rows = cache[pages].reshape(-1, kv_heads, head_dim)[:length]
            return rows.repeat_interleave(heads // kv_heads, dim=1).to(torch.float64 if q.dtype == torch.float64
                                                                        else torch.float32)

        k, v = cached(k_cache), cached(v_cache)
        scores = torch.einsum("hd,lhd->hl", q[b].to(k.dtype), k) * scale
        lses.append(torch.logsumexp(scores, dim=-1))
        outputs.append(torch.einsum("hl,lhd->hd", torch.softmax(scores, dim=-1), v).to(q.dtype))
    return torch.stack(outputs), torch.stack(lses).float()


def _grouped_gemm_reference(a, b, group_sizes):
    sizes = [int(n) for n in group_sizes]
    parts = torch.split(a[: sum(sizes)], sizes)
    # Rows past the groups (moe_routing's dispatched rows past the kept ones) are left unwritten by
    # the kernels; the formula gives zeros there, which nothing downstream reads.
    return torch.cat([part @ b[g].t() for g, part in enumerate(parts)] + [a.new_zeros(a.shape[0] - sum(sizes),
                                                                                       b.shape[1])])


def _block_sparse_attention_reference(q, k, v, block_mask, block, causal, scale):
    seq_q, seq_kv = q.shape[2], k.shape[2]
    kept = (block_mask != 0).repeat_interleave(block, 1).repeat_interleave(block, 2)[:, :seq_q, :seq_kv]
    if causal:
        kept = kept & _causal_mask(seq_q, seq_kv, q.device)
    return _masked_attention(q, k, v, kept, scale)


def _moe_routing_reference(logits, x, top_k, capacity_percent, renormalize):
    tokens, experts = logits.shape
    # Largest logit first, the lower expert among equal ones (a stable sort keeps index order).
    _, order = torch.sort(logits, dim=-1, descending=True, stable=True)
    ids = order[:, :top_k]
    chosen = logits.gather(1, ids)
    if renormalize:
        weights = torch.softmax(chosen.double(), -1)
    else:
        weights = torch.softmax(logits.double(), -1).gather(1, ids)
    # An expert's position of token t: the earlier tokens that chose it (a token chooses it once).
    chose = torch.zeros(tokens, experts, dtype=torch.long, device=x.device).scatter(1, ids, 1)
    position = (chose.cumsum(0) - chose).gather(1, ids)
    total = chose.sum(0)
    capacity = tokens if capacity_percent == 0 else \
        max(1, min(tokens, -(-capacity_percent * tokens * top_k // (100 * experts))))
    keeps = total.clamp(max=capacity)
    offset = keeps.cumsum(0) - keeps
    rows = torch.where(position < capacity, offset[ids] + position, torch.full_like(position, -1))
    dispatched = x.new_zeros((tokens * top_k, x.shape[1]))
    kept = rows >= 0
    dispatched = dispatched.index_put((rows[kept],), x.repeat_interleave(top_k, 0)[kept.flatten()])
    return (weights.float(), ids.int(), rows.int(), keeps.int(), (total - keeps).sum().view(1).int(), dispatched)


def _moe_combine_reference(expert_out, weights, rows):
    work = torch.float64 if expert_out.dtype == torch.float64 else torch.float32
    gathered = expert_out[rows.long().clamp(min=0)].to(work)  # [tokens, top_k, hidden]
    return (gathered * (weights.to(work) * (rows >= 0))[..., None]).sum(1).to(expert_out.dtype)


def _rotate_by_position(t, cos, sin):
    """NeoX RoPE of t [batch, seq, heads, head_dim] by tables [seq, head_dim / 2]: a token's position
    is its index in its sequence."""
    seq, half = t.shape[1], t.shape[-1] // 2
    c, s = cos.reshape(1, seq, 1, half), sin.reshape(1, seq, 1, half)
    return torch.cat((t[..., :half] * c - t[..., half:] * s, t[..., half:] * c + t[..., :half] * s), dim=-1)


def _attention_block_reference(x, w_qkv, b_qkv, w_o, b_o, heads, kv_heads, causal, cos, sin, residual):
    batch, seq, _ = x.shape
    kv_heads = kv_heads or heads
    head_dim = w_qkv.shape[0] // (heads + 2 * kv_heads)
    qkv = F.linear(x, w_qkv, b_qkv).view(batch, seq, heads + 2 * kv_heads, head_dim)
    q, k, v = qkv.split([heads, kv_heads, kv_heads], dim=2)
    if cos is not None:
        q, k = _rotate_by_position(q, cos, sin), _rotate_by_position(k, cos, sin)
    o, _ = _attention_reference(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), causal, None)
    y = F.linear(o.transpose(1, 2).reshape(batch, seq, heads * head_dim), w_o, b_o)
    return x + y if residual else y


def _split_heads_reference(qkv, heads, kv_heads, cos, sin):
    kv_heads = kv_heads or heads
    batch, seq, width = qkv.shape
    head_dim = width // (heads + 2 * kv_heads)
    q, k, v = qkv.view(batch, seq, heads + 2 * kv_heads, head_dim).split([heads, kv_heads, kv_heads], dim=2)
    if cos is not None:
        q, k = _rotate_by_position(q, cos, sin), _rotate_by_position(k, cos, sin)
    return tuple(t.transpose(1, 2).contiguous() for t in (q, k, v))


REFERENCES["split_heads"] = _split_heads_reference
REFERENCES["merge_heads"] = lambda x: x.transpose(1, 2).reshape(x.shape[0], x.shape[2], x.shape[1] * x.shape[3])
REFERENCES["paged_attention"] = _paged_attention_reference
REFERENCES["block_sparse_attention"] = _block_sparse_attention_reference
REFERENCES["moe_routing"] = _moe_routing_reference
REFERENCES["moe_combine"] = _moe_combine_reference
REFERENCES["grouped_gemm"] = _grouped_gemm_reference
REFERENCES["linear"] = _linear_reference
REFERENCES["ffn"] = _ffn_reference
REFERENCES["flash_attention"] = _attention_reference
REFERENCES["attention_block"] = _attention_block_reference
