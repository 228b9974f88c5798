"""Drop-in modules with PyTorch's constructors and state dicts, running ktune's kernels:

| ktune.nn           | replaces (same parameters, same state-dict keys)                  |
|--------------------|-------------------------------------------------------------------|
| RMSNorm            | torch.nn.RMSNorm (eps 1e-6 on the kernel)                          |
| LayerNorm          | torch.nn.LayerNorm (over the last dim, eps 1e-5 on the kernel)     |
| FusedAttention     | torch.nn.MultiheadAttention (self- and cross-attention)           |
| FusedFFN           | Linear -> GELU/SiLU -> Linear (fc1, fc2)                           |
| FusedInstanceNorm2d| torch.nn.InstanceNorm2d                                            |
| SwiGLU             | a Llama MLP (gate_proj, up_proj, down_proj)                        |
| MixtureOfExperts   | Mixtral's sparse MoE block (gate; w1, w3, w2 of every expert)      |

A setting the kernels do not take (another epsilon, a mask, attention weights asked for,
dropout while training, running statistics) runs PyTorch's own computation instead, with a
warning the first time, so a swapped model still computes what it did. `replace_modules(model)`
swaps every module it can, keeping the weights.
"""
import inspect
import itertools
import warnings

import torch
from torch import nn

from . import formulas, ops

_warned = set()


def _fallback(module, why):
    key = (type(module).__name__, why)
    if key not in _warned:
        _warned.add(key)
        warnings.warn(f"ktune.nn.{type(module).__name__}: {why}; running PyTorch's computation instead",
                      stacklevel=3)


def _same_dtype(module, x, *tensors):
    """Whether x and the module's tensors share one dtype (the kernels take one precision a call);
    otherwise (fp32 weights under autocast, say) PyTorch's computation runs, with a warning."""
    mismatched = [t.dtype for t in tensors if t is not None and t.dtype != x.dtype]
    if mismatched:
        _fallback(module, f"input {x.dtype} with parameters in {mismatched[0]}")
    return not mismatched


def _last_dim(shape):
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    return shape


def _stacked(module, name, parts, dim):
    """torch.cat(parts, dim), kept on `module` under `name` and made again only when a part changed
    (a new tensor, or an in-place update bumps its version): the stacked weights of a fused GEMM
    are not copied on every call. Training gets a fresh cat, which carries gradients back to the
    parts."""
    if torch.is_grad_enabled() and any(p.requires_grad for p in parts):
        return torch.cat(parts, dim)
    key = tuple((id(p), p._version) for p in parts)
    cached = getattr(module, name, None)
    if cached is None or cached[0] != key:
        with torch.no_grad():
            cached = (key, torch.cat(parts, dim))
        object.__setattr__(module, name, cached)  # not a parameter or buffer: no state-dict entry
    return cached[1]


class RMSNorm(nn.Module):
    """torch.nn.RMSNorm(normalized_shape, eps=1e-6, elementwise_affine=True). The kernel's epsilon
    is 1e-6; another value, or eps=None (PyTorch: the dtype's machine epsilon), runs PyTorch's."""

    def __init__(self, normalized_shape, eps=1e-6, elementwise_affine=True, device=None, dtype=None):
        super().__init__()
        self.normalized_shape = _last_dim(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = nn.Parameter(torch.ones(self.normalized_shape, device=device, dtype=dtype))
        else:
            self.register_parameter("weight", None)

    def forward(self, x):
        weight = self.weight if self.weight is not None else torch.ones(self.normalized_shape, dtype=x.dtype,
                                                                        device=x.device)
        if len(self.normalized_shape) != 1:
            _fallback(self, f"normalized_shape {self.normalized_shape} spans several dims")
        elif self.eps != formulas.RMS_NORM_EPS:
            _fallback(self, f"eps={self.eps} (the kernel's is {formulas.RMS_NORM_EPS})")
        elif _same_dtype(self, x, weight):
            return ops.rms_norm(x, weight)
        eps = torch.finfo(x.dtype).eps if self.eps is None else self.eps
        dims = tuple(range(-len(self.normalized_shape), 0))
        return x * torch.rsqrt(x.pow(2).mean(dims, keepdim=True) + eps) * weight

    def extra_repr(self):
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class LayerNorm(nn.LayerNorm):
    """torch.nn.LayerNorm, over the last dim on the kernel (eps 1e-5)."""

    def forward(self, x):
        if len(self.normalized_shape) != 1:
            _fallback(self, f"normalized_shape {self.normalized_shape} spans several dims")
        elif self.eps != formulas.LAYER_NORM_EPS:
            _fallback(self, f"eps={self.eps} (the kernel's is {formulas.LAYER_NORM_EPS})")
        elif _same_dtype(self, x, self.weight, getattr(self, "bias", None)):
            weight = self.weight if self.weight is not None else torch.ones(self.normalized_shape, dtype=x.dtype,
                                                                            device=x.device)
            bias = getattr(self, "bias", None)
            bias = bias if bias is not None else torch.zeros_like(weight)
            return ops.layer_norm(x, weight, bias)
        return super().forward(x)


class FusedInstanceNorm2d(nn.InstanceNorm2d):
    """torch.nn.InstanceNorm2d(num_features, eps=1e-5, momentum=0.1, affine=False,
    track_running_stats=False) on the kernel; running statistics run PyTorch's."""

    def forward(self, x):
        if self.track_running_stats:
            _fallback(self, "track_running_stats=True")
        elif self.eps != formulas.INSTANCE_NORM_EPS:
            _fallback(self, f"eps={self.eps} (the kernel's is {formulas.INSTANCE_NORM_EPS})")
        elif x.dim() != 4:
            _fallback(self, f"input of {x.dim()} dims (the kernel takes NCHW)")
        elif _same_dtype(self, x, self.weight if self.affine else None):
            weight = self.weight if self.affine else torch.ones(x.shape[1], dtype=x.dtype, device=x.device)
            bias = self.bias if self.affine else torch.zeros(x.shape[1], dtype=x.dtype, device=x.device)
            return ops.instance_norm(x, weight, bias)
        return super().forward(x)


_ACTIVATIONS = {nn.GELU: "gelu", nn.SiLU: "silu"}


class FusedFFN(nn.Module):
    """y = fc2(act(fc1(x))) in one fused kernel (act: "gelu", "gelu_tanh" or "silu"); state dict
    fc1.weight, fc1.bias, fc2.weight, fc2.bias, as two nn.Linear."""

    def __init__(self, embed_dim, hidden_dim, activation="gelu", bias=True, device=None, dtype=None):
        super().__init__()
        if activation not in ops.ACTIVATIONS:
            raise ValueError(f"ktune.nn.FusedFFN: activation {activation!r} is not one of {sorted(ops.ACTIVATIONS)}")
        self.activation = activation
        self.fc1 = nn.Linear(embed_dim, hidden_dim, bias=bias, device=device, dtype=dtype)
        self.fc2 = nn.Linear(hidden_dim, embed_dim, bias=bias, device=device, dtype=dtype)

    def forward(self, x):
        if not _same_dtype(self, x, self.fc1.weight, self.fc2.weight):
            hidden = self.fc1(x)
            hidden = {"gelu": nn.functional.gelu, "silu": nn.functional.silu,
                      "gelu_tanh": lambda h: nn.functional.gelu(h, approximate="tanh")}[self.activation](hidden)
            return self.fc2(hidden)
        b1 = self.fc1.bias if self.fc1.bias is not None else self.fc1.weight.new_zeros(self.fc1.out_features)
        b2 = self.fc2.bias if self.fc2.bias is not None else self.fc2.weight.new_zeros(self.fc2.out_features)
        return ops.ffn(x, self.fc1.weight, b1, self.fc2.weight, b2, self.activation)


class SwiGLU(nn.Module):
    """A Llama MLP: down_proj(silu(gate_proj(x)) * up_proj(x)), state dict gate_proj.weight,
    up_proj.weight, down_proj.weight (and biases with bias=True). The two input projections run as
    one GEMM and the gating as ktune's fused swiglu."""

    def __init__(self, in_features, hidden_features, out_features=None, bias=False, device=None, dtype=None):
        super().__init__()
        out_features = out_features or in_features
        self.gate_proj = nn.Linear(in_features, hidden_features, bias=bias, device=device, dtype=dtype)
        self.up_proj = nn.Linear(in_features, hidden_features, bias=bias, device=device, dtype=dtype)
        self.down_proj = nn.Linear(hidden_features, out_features, bias=bias, device=device, dtype=dtype)

    def forward(self, x):
        if not _same_dtype(self, x, self.gate_proj.weight, self.down_proj.weight):
            return self.down_proj(nn.functional.silu(self.gate_proj(x)) * self.up_proj(x))
        weight, bias = self._gate_up()
        return ops.linear(ops.swiglu(ops.linear(x, weight, bias)), self.down_proj.weight, self.down_proj.bias)

    def _gate_up(self):
        """gate_proj's and up_proj's weights (and biases) stacked for one GEMM."""
        weight = _stacked(self, "_gate_up_weight", (self.gate_proj.weight, self.up_proj.weight), 0)
        bias = None if self.gate_proj.bias is None else \
            _stacked(self, "_gate_up_bias", (self.gate_proj.bias, self.up_proj.bias), 0)
        return weight, bias


class MixtureOfExperts(nn.Module):
    """A sparse mixture-of-experts MLP, Mixtral's: a router (`gate`, hidden -> experts, no bias)
    sends each token to its top_k experts, each a SwiGLU MLP w2(silu(w1 x) * w3 x), and adds their
    outputs weighted by the router's softmax over the chosen experts (renormalize=True, Mixtral's)
    or over all of them. The experts' weights are stacked: w1 and w3 [experts, ffn, hidden], w2
    [experts, hidden, ffn]. With capacity_percent > 0 an expert keeps at most that percent of an
    even share of the choices, earlier tokens first (GShard's rule); a dropped choice adds nothing,
    and the last call's count of them is `last_dropped`.

    On ktune's kernels: moe_routing (softmax, top-k, capacity, tokens grouped by expert),
    grouped_gemm over the stacked gate and up projections, swiglu, grouped_gemm over w2, and
    moe_combine (the weighted sum back per token). `from_mixtral(block)` takes the weights of a
    Hugging Face MixtralSparseMoeBlock."""

    def __init__(self, hidden_size, ffn_size, num_experts, top_k=2, capacity_percent=0, renormalize=True, device=None,
                 dtype=None):
        super().__init__()
        if not 1 <= top_k <= num_experts:
            raise ValueError(f"ktune.nn.MixtureOfExperts: top_k={top_k} must be between 1 and num_experts={num_experts}")
        self.top_k, self.capacity_percent, self.renormalize = top_k, capacity_percent, renormalize
        self.gate = nn.Linear(hidden_size, num_experts, bias=False, device=device, dtype=dtype)
        factory = dict(device=device, dtype=dtype)
        self.w1 = nn.Parameter(torch.empty(num_experts, ffn_size, hidden_size, **factory))
        self.w3 = nn.Parameter(torch.empty(num_experts, ffn_size, hidden_size, **factory))
        self.w2 = nn.Parameter(torch.empty(num_experts, hidden_size, ffn_size, **factory))
        for weight in (self.w1, self.w3, self.w2):  # nn.Linear's initialisation, per expert
            bound = 1.0 / weight.shape[-1] ** 0.5
            nn.init.uniform_(weight, -bound, bound)
        self.last_dropped = None

    @classmethod
    def from_mixtral(cls, block):
        """The module of a Hugging Face MixtralSparseMoeBlock's weights (gate, experts[i].w1/w2/w3)."""
        experts = block.experts
        w1 = torch.stack([e.w1.weight for e in experts])
        module = cls(w1.shape[2], w1.shape[1], len(experts), block.top_k, device=w1.device, dtype=w1.dtype)
        with torch.no_grad():
            module.gate.weight.copy_(block.gate.weight)
            module.w1.copy_(w1)
            module.w3.copy_(torch.stack([e.w3.weight for e in experts]))
            module.w2.copy_(torch.stack([e.w2.weight for e in experts]))
        return module

    def forward(self, x):
        shape = x.shape
        flat = x.reshape(-1, shape[-1])
        if not _same_dtype(self, x, self.gate.weight, self.w1, self.w3, self.w2):
            kept = None
            if self.capacity_percent:  # the choices the capacity keeps, as the kernels would
                logits = nn.functional.linear(flat, self.gate.weight).float()
                kept = formulas.REFERENCES["moe_routing"](logits, flat, self.top_k, self.capacity_percent,
                                                          self.renormalize)[2] >= 0
            return self.reference(flat, kept=kept).reshape(shape)
        weights, _, rows, counts, dropped, dispatched = ops.moe_routing(
            ops.linear(flat, self.gate.weight), flat, self.top_k, self.capacity_percent, self.renormalize)
        self.last_dropped = dropped
        hidden = ops.swiglu(ops.grouped_gemm(dispatched, _stacked(self, "_w13", (self.w1, self.w3), 1), counts))
        return ops.moe_combine(ops.grouped_gemm(hidden, self.w2, counts), weights, rows).reshape(shape)

    def reference(self, flat, kept=None, chosen=None):
        """The same block in PyTorch over each expert's tokens: what the kernels are checked against,
        and what runs where they cannot. No capacity: every choice counts, unless `kept` [tokens,
        top_k] (bool) says which do (moe_routing's rows >= 0). `chosen` [tokens, top_k] imposes the
        experts (moe_routing's expert_ids), so that a comparison in another precision does not
        hinge on near-equal logits ordering alike."""
        logits = nn.functional.linear(flat, self.gate.weight).float()
        if chosen is None:
            chosen = torch.sort(logits, dim=-1, descending=True, stable=True)[1][:, : self.top_k]
        chosen = chosen.long()
        weights = torch.softmax(logits.gather(1, chosen) if self.renormalize else logits, -1)
        if not self.renormalize:
            weights = weights.gather(1, chosen)
        if kept is not None:
            weights = weights * kept
        out = torch.zeros_like(flat, dtype=torch.float32)
        for e in range(self.w1.shape[0]):
            token, slot = (chosen == e).nonzero(as_tuple=True)
            if token.numel():
                h = nn.functional.silu(flat[token] @ self.w1[e].t()) * (flat[token] @ self.w3[e].t())
                out.index_add_(0, token, (h @ self.w2[e].t()).float() * weights[token, slot, None])
        return out.to(flat.dtype)


class FusedAttention(nn.MultiheadAttention):
    """torch.nn.MultiheadAttention with the same constructor, state dict and forward signature:
    the projections on ktune's GEMM and the attention on ktune's flash attention. As in PyTorch's
    own fast path, pass need_weights=False: attention weights, masks other than is_causal, and
    dropout while training run PyTorch's computation."""

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
                average_attn_weights=True, is_causal=False):
        why = None
        if need_weights:
            why = "need_weights=True (the fused path returns no attention weights)"
        elif key_padding_mask is not None or (attn_mask is not None and not is_causal):
            why = "a key_padding_mask or attn_mask"
        elif is_causal and _length(query, self.batch_first) != _length(key, self.batch_first):
            why = "is_causal with query and key lengths that differ (PyTorch's mask is top-left aligned)"
        elif self.training and self.dropout > 0:
            why = f"dropout={self.dropout} while training"
        elif not self._qkv_same_embed_dim or self.bias_k is not None or self.add_zero_attn:
            why = "separate kdim/vdim, add_bias_kv or add_zero_attn"
        elif query.dim() != 3:
            why = f"an input of {query.dim()} dims (batched inputs are 3-D)"
        if why:
            _fallback(self, why)
            kwargs = dict(key_padding_mask=key_padding_mask, need_weights=need_weights, attn_mask=attn_mask,
                          average_attn_weights=average_attn_weights)
            if "is_causal" in inspect.signature(nn.MultiheadAttention.forward).parameters:
                kwargs["is_causal"] = is_causal
            elif is_causal:
                raise ValueError("ktune.nn.FusedAttention: is_causal needs a mask in this PyTorch's own path")
            return super().forward(query, key, value, **kwargs)
        self_attention = query is key and key is value
        if not self.batch_first:
            query, key, value = (t.transpose(0, 1) for t in (query, key, value))
        embed, heads = self.embed_dim, self.num_heads
        w, b = self.in_proj_weight, self.in_proj_bias
        if self_attention and (embed // heads) % 2 == 0:
            # One library call: the projections, the head split, the attention and the head merge
            # (attention_block; its split takes even head sizes).
            out = ops.attention_block(query, w, b, self.out_proj.weight, self.out_proj.bias, heads, heads, is_causal,
                                      None, None, False)
            return (out if self.batch_first else out.transpose(0, 1)), None
        bias = (lambda i: None) if b is None else (lambda i: b[i * embed:(i + 1) * embed])
        if self_attention:
            qkv = ops.linear(query, w, b)
            q, k, v = qkv.split(embed, dim=-1)
        else:
            q = ops.linear(query, w[:embed], bias(0))
            k = ops.linear(key, w[embed:2 * embed], bias(1))
            v = ops.linear(value, w[2 * embed:], bias(2))

        def heads_first(t):  # [batch, seq, embed] -> [batch, heads, seq, head_dim]
            return t.reshape(t.shape[0], t.shape[1], heads, embed // heads).transpose(1, 2).contiguous()

        o = ops.flash_attention(heads_first(q), heads_first(k), heads_first(v), causal=is_causal)
        o = o.transpose(1, 2).reshape(query.shape[0], query.shape[1], embed)
        out = ops.linear(o, self.out_proj.weight, self.out_proj.bias)
        return (out if self.batch_first else out.transpose(0, 1)), None


def _length(t, batch_first):
    """The sequence length of a batched (3-D) attention input."""
    return t.shape[1] if batch_first else t.shape[0]


def replace_modules(model):
    """Swaps, in place, every nn.LayerNorm, nn.RMSNorm, nn.InstanceNorm2d and nn.MultiheadAttention
    of `model` for its ktune counterpart with the same weights; returns the model."""
    for name, child in list(model.named_children()):
        new = None
        if type(child) is nn.LayerNorm:
            kwargs = {"bias": child.bias is not None} if "bias" in inspect.signature(nn.LayerNorm).parameters else {}
            new = LayerNorm(child.normalized_shape, eps=child.eps, elementwise_affine=child.elementwise_affine, **kwargs)
        elif type(child).__name__ == "RMSNorm" and type(child).__module__.startswith("torch.nn"):
            new = RMSNorm(child.normalized_shape, eps=child.eps, elementwise_affine=child.elementwise_affine)
        elif type(child) is nn.InstanceNorm2d:
            new = FusedInstanceNorm2d(child.num_features, eps=child.eps, momentum=child.momentum, affine=child.affine,
                                      track_running_stats=child.track_running_stats)
        elif type(child) is nn.MultiheadAttention:
            new = FusedAttention(child.embed_dim, child.num_heads, dropout=child.dropout,
                                 bias=child.in_proj_bias is not None, add_bias_kv=child.bias_k is not None,
                                 add_zero_attn=child.add_zero_attn, kdim=child.kdim, vdim=child.vdim,
                                 batch_first=child.batch_first)
        if new is not None:
            first = next(itertools.chain(child.parameters(), child.buffers()), None)
            if first is not None:
                new = new.to(device=first.device, dtype=first.dtype)
            new.load_state_dict(child.state_dict())
            new.train(child.training)
            # The hooks a user put on the module stay with it.
            for hooks in ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks"):
                getattr(new, hooks).update(getattr(child, hooks))
            setattr(model, name, new)
        else:
            replace_modules(child)
    return model
