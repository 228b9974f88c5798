"""ktune's kernels as PyTorch ops: registered with torch.library under the namespace `ktune`
(torch.ops.ktune.rms_norm, ...), with a Meta implementation for shape propagation (torch.compile
traces through them), and functional wrappers (ktune.rms_norm, ...) that add autograd.

The kernels compute the forward pass, and attention's backward where KERNEL_BACKWARD_DEVICES says
(flash_attention_backward). Every other backward, and any double backward, is PyTorch recomputing
the same function from its saved inputs (torch.autograd.grad through the op's PyTorch formula):
correct gradients, at the cost of PyTorch's speed and memory for the backward.

The formulas, and the constants the kernels fix (epsilons, softmax_dropout's p), are
ktune.formulas.
"""
import math

import torch

from . import _dispatch
from ._native import BadArgument
from .formulas import REFERENCES, _attention_reference

# gemm's epilogues (kernels/gemm/family.cpp) and ffn's activations (kernels/ffn/family.cpp).
_EPILOGUE = {("none", False, False): 0, ("none", False, True): 1, ("none", True, False): 2,
             ("gelu", True, False): 3, ("silu", True, False): 4, ("none", True, True): 5}
ACTIVATIONS = {"gelu": 0, "gelu_tanh": 1, "silu": 2}

_library = torch.library.Library("ktune", "DEF")
# PyTorch 1.x has no autograd fallthrough for meta tensors: an op registered only for Meta fails
# on them at the AutogradMeta key. Autograd of these ops is handled above the op (_Recomputed).
_META_NEEDS_AUTOGRAD_KERNEL = int(torch.__version__.split(".")[0]) < 2


def _register(schema, kernel, meta):
    name = schema.split("(")[0]
    _library.define(schema)
    _library.impl(name, kernel, "CPU")
    _library.impl(name, kernel, "CUDA")
    _library.impl(name, meta, "Meta")
    if _META_NEEDS_AUTOGRAD_KERNEL:
        _library.impl(name, meta, "AutogradMeta")
    return getattr(torch.ops.ktune, name)


def _rows_cols(op, x, cols):
    if x.dim() == 0 or x.shape[-1] != cols:
        raise BadArgument(f"ktune.{op}: the last dim of x is {tuple(x.shape)[-1:] or 'missing'}, expected {cols}")
    return x.numel() // cols if cols else 0, cols


# --- row families: rmsnorm, layernorm, softmax, softmax_dropout, swiglu, geglu -------------------

def _rms_norm(x, weight):
    rows, cols = _rows_cols("rms_norm", x, weight.numel())
    out = torch.empty_like(x, memory_format=torch.contiguous_format)
    _dispatch.run("rms_norm", "rmsnorm", {"x": x, "weight": weight}, {"out": out}, {"rows": rows, "cols": cols})
    return out


def _layer_norm(x, weight, bias):
    rows, cols = _rows_cols("layer_norm", x, weight.numel())
    if bias.numel() != cols:
        raise BadArgument(f"ktune.layer_norm: bias has {bias.numel()} elements, weight {cols}")
    out = torch.empty_like(x, memory_format=torch.contiguous_format)
    _dispatch.run("layer_norm", "layernorm", {"x": x, "gamma": weight, "beta": bias}, {"out": out},
                  {"rows": rows, "cols": cols})
    return out


def _row_op(op, family):
    """A kernel over x's rows (its last dim), out like x; `extra` tensors (softmax_dropout's rng)
    go with it."""
    def kernel(x, **extra):
        rows, cols = _rows_cols(op, x, x.shape[-1] if x.dim() else 0)
        out = torch.empty_like(x, memory_format=torch.contiguous_format)
        _dispatch.run(op, family, {"x": x}, {"out": out}, {"rows": rows, "cols": cols}, extra=extra)
        return out
    return kernel


def _gated(op, family):
    def kernel(x):
        if x.dim() == 0 or x.shape[-1] % 2:
            raise BadArgument(f"ktune.{op}: the last dim of x must be even (gate and up halves), got {tuple(x.shape)}")
        cols = x.shape[-1] // 2
        out = x.new_empty(tuple(x.shape[:-1]) + (cols,))
        _dispatch.run(op, family, {"x": x}, {"out": out}, {"rows": x.numel() // (2 * cols) if cols else 0, "cols": cols})
        return out
    return kernel


def _gated_meta(x):
    return x.new_empty(tuple(x.shape[:-1]) + (x.shape[-1] // 2,))


def _like(x, *rest):
    # Contiguous, as the kernels' outputs are whatever the input's strides (torch.compile checks).
    return torch.empty_like(x, memory_format=torch.contiguous_format)


rms_norm_op = _register("rms_norm(Tensor x, Tensor weight) -> Tensor", _rms_norm, _like)
layer_norm_op = _register("layer_norm(Tensor x, Tensor weight, Tensor bias) -> Tensor", _layer_norm, _like)
softmax_op = _register("softmax(Tensor x) -> Tensor", _row_op("softmax", "softmax"), _like)


_softmax_dropout_rows = _row_op("softmax_dropout", "softmax_dropout")


def _softmax_dropout(x, rng):
    if rng.dtype != torch.int32 or rng.numel() != 2:
        raise BadArgument(f"ktune.softmax_dropout: rng must be 2 int32 values (seed, offset), got {rng.dtype} "
                          f"{tuple(rng.shape)}")
    return _softmax_dropout_rows(x, rng=rng)


softmax_dropout_op = _register("softmax_dropout(Tensor x, Tensor rng) -> Tensor", _softmax_dropout,
                               _like)
swiglu_op = _register("swiglu(Tensor x) -> Tensor", _gated("swiglu", "swiglu"), _gated_meta)
geglu_op = _register("geglu(Tensor x) -> Tensor", _gated("geglu", "geglu"), _gated_meta)


# --- rms_norm_rope: QK-norm + NeoX rotary embedding ----------------------------------------------

def _rms_norm_rope(x, weight, cos, sin):
    if x.dim() < 2:
        raise BadArgument(f"ktune.rms_norm_rope: x must be [..., heads, head_dim], got {tuple(x.shape)}")
    heads, head_dim = x.shape[-2], x.shape[-1]
    rows = x.numel() // (heads * head_dim) if heads * head_dim else 0
    if head_dim % 2 or weight.numel() != head_dim:
        raise BadArgument(f"ktune.rms_norm_rope: head_dim {head_dim} must be even and weight must have head_dim "
                          f"elements (has {weight.numel()})")
    for name, t in (("cos", cos), ("sin", sin)):
        if t.numel() != rows * (head_dim // 2):
            raise BadArgument(f"ktune.rms_norm_rope: {name} must be [rows={rows}, head_dim/2={head_dim // 2}], "
                              f"got {tuple(t.shape)}")
    out = torch.empty_like(x, memory_format=torch.contiguous_format)
    _dispatch.run("rms_norm_rope", "rmsnorm_rope", {"x": x, "weight": weight, "cos": cos, "sin": sin}, {"out": out},
                  {"rows": rows, "heads": heads, "head_dim": head_dim})
    return out


rms_norm_rope_op = _register("rms_norm_rope(Tensor x, Tensor weight, Tensor cos, Tensor sin) -> Tensor",
                             _rms_norm_rope, _like)


_constants = {}


def _constant(value, count, dtype, device):
    """A small read-only tensor of `value` (GEMM's alpha and beta, attention's scale), made once per
    value, dtype and device rather than filled on every call. Outside a CUDA graph capture only:
    one made during capture would belong to the graph's memory pool."""
    key = (value, count, dtype, device)
    tensor = _constants.get(key)
    if tensor is None:
        tensor = torch.full((count,), value, dtype=dtype, device=device)
        capturing = device.type == "cuda" and torch.cuda.is_current_stream_capturing()
        if not capturing:
            _constants[key] = tensor
    return tensor


# --- linear: gemm with its epilogues ----------------------------------------------------------------

def _linear_out_shape(x, weight):
    return tuple(x.shape[:-1]) + (weight.shape[0],)


def _linear(x, weight, bias, residual, activation):
    if weight.dim() != 2 or x.dim() == 0 or x.shape[-1] != weight.shape[1]:
        raise BadArgument(f"ktune.linear: x {tuple(x.shape)} and weight {tuple(weight.shape)} do not match "
                          "(weight is [out_features, in_features], as nn.Linear's)")
    n, k = weight.shape
    m = x.numel() // k if k else 0
    key = (activation, bias is not None, residual is not None)
    if key not in _EPILOGUE:
        raise BadArgument(f"ktune.linear: activation={activation!r} with bias={bias is not None} and "
                          f"residual={residual is not None} is not an epilogue of ktune's GEMM (activations need a "
                          "bias; a residual takes no activation)")
    if bias is not None and bias.numel() != n:
        raise BadArgument(f"ktune.linear: bias has {bias.numel()} elements, the output {n} features")
    epilogue = _EPILOGUE[key]
    out = x.new_empty(_linear_out_shape(x, weight))
    if residual is not None and residual.shape != out.shape:
        raise BadArgument(f"ktune.linear: residual {tuple(residual.shape)} must have the output's shape "
                          f"{tuple(out.shape)}")
    scalars = _constant(1.0, 2, x.dtype, x.device)  # alpha, beta
    inputs = {"a": x, "b": weight, "c": residual if residual is not None else scalars[:1],
              "bias": bias if bias is not None else scalars[:1], "scalars": scalars}
    _dispatch.run("linear", "gemm", inputs, {"d": out},
                  {"m": m, "n": n, "k": k, "b_layout": 0, "epilogue": epilogue})
    return out


def _linear_meta(x, weight, bias, residual, activation):
    return x.new_empty(_linear_out_shape(x, weight))


linear_op = _register("linear(Tensor x, Tensor weight, Tensor? bias, Tensor? residual, str activation) -> Tensor",
                      _linear, _linear_meta)


# --- split_heads / merge_heads: a QKV projection's token rows to heads and back ----------------------

def _split_heads_meta(qkv, heads, kv_heads, cos, sin):
    """q, k, v as split_heads returns them, unfilled."""
    kv_heads = kv_heads or heads
    batch, seq, width = qkv.shape
    head_dim = width // (heads + 2 * kv_heads)
    return (qkv.new_empty((batch, heads, seq, head_dim)), qkv.new_empty((batch, kv_heads, seq, head_dim)),
            qkv.new_empty((batch, kv_heads, seq, head_dim)))


def _split_heads(qkv, heads, kv_heads, cos, sin):
    kv_heads = kv_heads or heads
    if qkv.dim() != 3 or heads <= 0 or heads % kv_heads or qkv.shape[2] % (heads + 2 * kv_heads):
        raise BadArgument(f"ktune.split_heads: qkv must be [batch, seq, (heads + 2 kv_heads) * head_dim] with kv_heads "
                          f"dividing heads; got {tuple(qkv.shape)}, heads={heads}, kv_heads={kv_heads}")
    batch, seq, width = qkv.shape
    head_dim = width // (heads + 2 * kv_heads)
    rope = cos is not None
    if rope != (sin is not None) or (rope and (head_dim % 2 or cos.numel() != seq * (head_dim // 2)
                                               or sin.numel() != seq * (head_dim // 2))):
        raise BadArgument(f"ktune.split_heads: cos and sin must both be given, each [seq={seq}, head_dim/2="
                          f"{head_dim // 2}] (an even head_dim), or both be None")
    q, k, v = _split_heads_meta(qkv, heads, kv_heads, cos, sin)
    _dispatch.run("split_heads", "split_heads",
                  {"qkv": qkv, "cos": cos if rope else qkv.new_zeros(1), "sin": sin if rope else qkv.new_zeros(1)},
                  {"q": q, "k": k, "v": v},
                  {"batch": batch, "seq": seq, "heads": heads, "kv_heads": kv_heads, "head_dim": head_dim,
                   "rope": int(rope)})
    return q, k, v


split_heads_op = _register(
    "split_heads(Tensor qkv, int heads, int kv_heads, Tensor? cos, Tensor? sin) -> (Tensor, Tensor, Tensor)",
    _split_heads, _split_heads_meta)


def _merge_heads_meta(x):
    """y as merge_heads returns it, unfilled."""
    return x.new_empty((x.shape[0], x.shape[2], x.shape[1] * x.shape[3]))


def _merge_heads(x):
    if x.dim() != 4:
        raise BadArgument(f"ktune.merge_heads: x must be [batch, heads, seq, head_dim], got {tuple(x.shape)}")
    batch, heads, seq, head_dim = x.shape
    y = _merge_heads_meta(x)
    _dispatch.run("merge_heads", "merge_heads", {"x": x}, {"y": y},
                  {"batch": batch, "heads": heads, "seq": seq, "head_dim": head_dim})
    return y


merge_heads_op = _register("merge_heads(Tensor x) -> Tensor", _merge_heads, _merge_heads_meta)


# --- flash attention ----------------------------------------------------------------------------------

def _attention_shapes(op, q, k, v):
    """BadArgument unless q is [batch, heads, seq_q, head_dim] and k, v [batch, kv_heads, seq_kv,
    head_dim] with kv_heads dividing heads (what every attention kernel reads)."""
    if q.dim() != 4 or k.dim() != 4 or v.shape != k.shape or q.shape[0] != k.shape[0] or q.shape[3] != k.shape[3] \
            or k.shape[1] == 0 or q.shape[1] % k.shape[1]:
        raise BadArgument(f"ktune.{op}: q must be [batch, heads, seq_q, head_dim] and k, v [batch, kv_heads, seq_kv, "
                          f"head_dim] (same batch and head_dim; kv heads dividing the query heads); got q "
                          f"{tuple(q.shape)}, k {tuple(k.shape)}, v {tuple(v.shape)}")


def _flash_attention(q, k, v, causal, scale):
    _attention_shapes("flash_attention", q, k, v)
    batch, heads, seq_q, head_dim = q.shape
    o = torch.empty_like(q, memory_format=torch.contiguous_format)
    lse = torch.empty((batch, heads, seq_q), dtype=torch.float32, device=q.device)
    scale_tensor = _constant(1.0 / math.sqrt(head_dim) if scale is None else float(scale), 1, torch.float32, q.device)
    _dispatch.run("flash_attention", "flash_attention", {"q": q, "k": k, "v": v}, {"o": o},
                  {"batch": batch, "heads": heads, "kv_heads": k.shape[1], "seq_q": seq_q, "seq_kv": k.shape[2],
                   "head_dim": head_dim, "causal": int(bool(causal))},
                  extra={"lse": lse, "scale": scale_tensor})
    return o, lse


def _flash_attention_meta(q, k, v, causal, scale):
    return torch.empty_like(q, memory_format=torch.contiguous_format), q.new_empty(q.shape[:3], dtype=torch.float32)


flash_attention_op = _register(
    "flash_attention(Tensor q, Tensor k, Tensor v, bool causal, float? scale) -> (Tensor, Tensor)",
    _flash_attention, _flash_attention_meta)


def _flash_attention_backward(q, k, v, o, dout, lse, causal, scale):
    _attention_shapes("flash_attention_backward", q, k, v)
    if o.shape != q.shape or dout.shape != q.shape or tuple(lse.shape) != tuple(q.shape[:3]):
        raise BadArgument(f"ktune.flash_attention_backward: o and dout must be shaped like q {tuple(q.shape)} and lse "
                          f"[batch, heads, seq_q]; got o {tuple(o.shape)}, dout {tuple(dout.shape)}, lse "
                          f"{tuple(lse.shape)}")
    if lse.dtype != torch.float32:
        raise BadArgument(f"ktune.flash_attention_backward: lse must be float32, as the forward gives it; got {lse.dtype}")
    batch, heads, seq_q, head_dim = q.shape
    dq = torch.empty_like(q, memory_format=torch.contiguous_format)
    dk = torch.empty_like(k, memory_format=torch.contiguous_format)
    dv = torch.empty_like(v, memory_format=torch.contiguous_format)
    scale_tensor = _constant(1.0 / math.sqrt(head_dim) if scale is None else float(scale), 1, torch.float32, q.device)
    _dispatch.run("flash_attention_backward", "flash_attention_backward",
                  {"q": q, "k": k, "v": v, "o": o, "dout": dout}, {"dq": dq, "dk": dk, "dv": dv},
                  {"batch": batch, "heads": heads, "kv_heads": k.shape[1], "seq_q": seq_q, "seq_kv": k.shape[2],
                   "head_dim": head_dim, "causal": int(bool(causal))},
                  extra={"lse": lse, "scale": scale_tensor})
    return dq, dk, dv


flash_attention_backward_op = _register(
    "flash_attention_backward(Tensor q, Tensor k, Tensor v, Tensor o, Tensor dout, Tensor lse, bool causal, "
    "float? scale) -> (Tensor, Tensor, Tensor)", _flash_attention_backward,
    lambda q, k, v, *rest: tuple(torch.empty_like(t, memory_format=torch.contiguous_format) for t in (q, k, v)))


# --- ffn, layer_norm_linear, instance_norm ------------------------------------------------------------

def _ffn(x, w1, b1, w2, b2, activation):
    if activation not in ACTIVATIONS:
        raise BadArgument(f"ktune.ffn: activation {activation!r} is not one of {sorted(ACTIVATIONS)}")
    f, k = w1.shape
    if x.shape[-1] != k or tuple(w2.shape) != (k, f) or b1.numel() != f or b2.numel() != k:
        raise BadArgument(f"ktune.ffn: shapes do not fit: x {tuple(x.shape)}, w1 {tuple(w1.shape)} [ffn, hidden], "
                          f"b1 {tuple(b1.shape)}, w2 {tuple(w2.shape)} [hidden, ffn], b2 {tuple(b2.shape)}")
    y = torch.empty_like(x, memory_format=torch.contiguous_format)
    _dispatch.run("ffn", "ffn", {"x": x, "w1": w1, "b1": b1, "w2": w2, "b2": b2}, {"y": y},
                  {"m": x.numel() // k if k else 0, "k": k, "f": f, "activation": ACTIVATIONS[activation]})
    return y


ffn_op = _register("ffn(Tensor x, Tensor w1, Tensor b1, Tensor w2, Tensor b2, str activation) -> Tensor", _ffn, _like)


def _layer_norm_linear(x, gamma, beta, weight, bias):
    n, k = weight.shape
    if x.shape[-1] != k or gamma.numel() != k or beta.numel() != k or bias.numel() != n:
        raise BadArgument(f"ktune.layer_norm_linear: shapes do not fit: x {tuple(x.shape)}, gamma {tuple(gamma.shape)}, "
                          f"beta {tuple(beta.shape)}, weight {tuple(weight.shape)} [out, in], bias {tuple(bias.shape)}")
    y = x.new_empty(_linear_out_shape(x, weight))
    _dispatch.run("layer_norm_linear", "layernorm_linear",
                  {"x": x, "gamma": gamma, "beta": beta, "w": weight, "bias": bias}, {"y": y},
                  {"m": x.numel() // k if k else 0, "n": n, "k": k})
    return y


layer_norm_linear_op = _register(
    "layer_norm_linear(Tensor x, Tensor gamma, Tensor beta, Tensor weight, Tensor bias) -> Tensor",
    _layer_norm_linear, lambda x, gamma, beta, weight, bias: x.new_empty(_linear_out_shape(x, weight)))


def _instance_norm(x, weight, bias):
    if x.dim() != 4 or weight.numel() != x.shape[1] or bias.numel() != x.shape[1]:
        raise BadArgument(f"ktune.instance_norm: x must be [batch, channels, height, width] with weight and bias of "
                          f"channels elements; got {tuple(x.shape)}, {tuple(weight.shape)}, {tuple(bias.shape)}")
    out = torch.empty_like(x, memory_format=torch.contiguous_format)
    batch, channels, height, width = x.shape
    _dispatch.run("instance_norm", "instance_norm", {"x": x, "gamma": weight, "beta": bias}, {"out": out},
                  {"batch": batch, "channels": channels, "height": height, "width": width})
    return out


instance_norm_op = _register("instance_norm(Tensor x, Tensor weight, Tensor bias) -> Tensor", _instance_norm, _like)


# --- attention_block: QKV projection, RoPE, attention, output projection in one library call -------

def _attention_block(x, w_qkv, b_qkv, w_o, b_o, heads, kv_heads, causal, cos, sin, residual):
    batch, seq, hidden = x.shape if x.dim() == 3 else (0, 0, 0)
    kv_heads = kv_heads or heads
    qkv_width = w_qkv.shape[0] if w_qkv.dim() == 2 else 0
    head_dim = qkv_width // (heads + 2 * kv_heads) if heads > 0 and kv_heads > 0 else 0
    rope = cos is not None
    if (x.dim() != 3 or heads <= 0 or heads % kv_heads or head_dim % 2 or head_dim * (heads + 2 * kv_heads) != qkv_width
            or tuple(w_qkv.shape) != (qkv_width, hidden) or tuple(w_o.shape) != (hidden, heads * head_dim)
            or (b_qkv is not None and b_qkv.numel() != qkv_width) or (b_o is not None and b_o.numel() != hidden)
            or (cos is None) != (sin is None)
            or (rope and (tuple(cos.shape) != (seq, head_dim // 2) or tuple(sin.shape) != (seq, head_dim // 2)))):
        raise BadArgument(
            f"ktune.attention_block: shapes do not fit: x {tuple(x.shape)} [batch, seq, hidden], w_qkv "
            f"{tuple(w_qkv.shape)} [(heads + 2 kv_heads) * head_dim, hidden], w_o {tuple(w_o.shape)} [hidden, heads * "
            f"head_dim], heads {heads}, kv_heads {kv_heads}, cos/sin "
            f"{None if cos is None else tuple(cos.shape)}/{None if sin is None else tuple(sin.shape)} [seq, head_dim / 2] "
            "(head_dim even; kv_heads dividing heads)")
    # A missing bias adds zeros; without RoPE the tables are single unread elements.
    y = torch.empty_like(x, memory_format=torch.contiguous_format)
    _dispatch.run("attention_block", "attention_block",
                  {"x": x, "w_qkv": w_qkv, "b_qkv": x.new_zeros(qkv_width) if b_qkv is None else b_qkv,
                   "cos": cos if rope else x.new_zeros(1), "sin": sin if rope else x.new_zeros(1), "w_o": w_o,
                   "b_o": x.new_zeros(hidden) if b_o is None else b_o},
                  {"y": y},
                  {"batch": batch, "seq": seq, "hidden": hidden, "heads": heads, "kv_heads": kv_heads,
                   "head_dim": head_dim, "causal": int(bool(causal)), "rope": int(rope), "residual": int(bool(residual))})
    return y


attention_block_op = _register(
    "attention_block(Tensor x, Tensor w_qkv, Tensor? b_qkv, Tensor w_o, Tensor? b_o, int heads, int kv_heads, "
    "bool causal, Tensor? cos, Tensor? sin, bool residual) -> Tensor", _attention_block, _like)


# --- serving and mixture-of-experts: paged decode attention, grouped GEMM -------------------------

def _int32(t):
    return t if t.dtype == torch.int32 else t.to(torch.int32)


def _paged_attention(q, k_cache, v_cache, block_table, seq_lens, scale):
    if q.dim() != 3 or k_cache.dim() != 4 or v_cache.shape != k_cache.shape:
        raise BadArgument(f"ktune.paged_attention: q must be [batch, heads, head_dim] and the caches [pages, page_size, "
                          f"kv_heads, head_dim] alike; got {tuple(q.shape)}, {tuple(k_cache.shape)}, "
                          f"{tuple(v_cache.shape)}")
    batch, heads, head_dim = q.shape
    _, page_size, kv_heads, cache_dim = k_cache.shape
    if cache_dim != head_dim or heads % kv_heads or block_table.dim() != 2 or block_table.shape[0] != batch \
            or seq_lens.numel() != batch:
        raise BadArgument(f"ktune.paged_attention: shapes do not fit: q {tuple(q.shape)}, caches {tuple(k_cache.shape)}, "
                          f"block_table {tuple(block_table.shape)} [batch, max_pages], seq_lens {tuple(seq_lens.shape)}")
    o = torch.empty_like(q, memory_format=torch.contiguous_format)
    lse = torch.empty((batch, heads), dtype=torch.float32, device=q.device)
    scale_tensor = _constant(1.0 / math.sqrt(head_dim) if scale is None else float(scale), 1, torch.float32, q.device)
    _dispatch.run("paged_attention", "paged_attention", {"q": q, "k_cache": k_cache, "v_cache": v_cache}, {"o": o},
                  {"batch": batch, "heads": heads, "kv_heads": kv_heads, "head_dim": head_dim, "page_size": page_size,
                   "seq_kv": block_table.shape[1] * page_size},
                  extra={"block_table": _int32(block_table), "seq_lens": _int32(seq_lens), "scale": scale_tensor,
                         "lse": lse})
    return o, lse


paged_attention_op = _register(
    "paged_attention(Tensor q, Tensor k_cache, Tensor v_cache, Tensor block_table, Tensor seq_lens, float? scale) "
    "-> (Tensor, Tensor)", _paged_attention,
    lambda q, *rest: (torch.empty_like(q, memory_format=torch.contiguous_format),
                      q.new_empty(q.shape[:2], dtype=torch.float32)))


def _grouped_gemm(a, b, group_sizes):
    if a.dim() != 2 or b.dim() != 3 or a.shape[1] != b.shape[2] or group_sizes.numel() != b.shape[0]:
        raise BadArgument(f"ktune.grouped_gemm: a must be [m, k], b [experts, n, k] and group_sizes [experts]; got "
                          f"{tuple(a.shape)}, {tuple(b.shape)}, {tuple(group_sizes.shape)}")
    if group_sizes.device.type == "cpu" and int(group_sizes.sum()) > a.shape[0]:
        # (On a GPU the sizes are trusted: checking them would wait for the device.)
        raise BadArgument(f"ktune.grouped_gemm: group_sizes sum to {int(group_sizes.sum())}, more than a's "
                          f"{a.shape[0]} rows")
    d = a.new_empty((a.shape[0], b.shape[1]))
    _dispatch.run("grouped_gemm", "grouped_gemm", {"a": a, "b": b}, {"d": d},
                  {"m": a.shape[0], "experts": b.shape[0], "n": b.shape[1], "k": a.shape[1]},
                  extra={"group_sizes": _int32(group_sizes)})
    return d


grouped_gemm_op = _register("grouped_gemm(Tensor a, Tensor b, Tensor group_sizes) -> Tensor", _grouped_gemm,
                            lambda a, b, group_sizes: a.new_empty((a.shape[0], b.shape[1])))


def _block_sparse_attention(q, k, v, block_mask, block, causal, scale):
    _attention_shapes("block_sparse_attention", q, k, v)
    if block < 16:
        raise BadArgument(f"ktune.block_sparse_attention: block must be at least 16, got {block}")
    batch, heads, seq_q, head_dim = q.shape
    seq_kv = k.shape[2]
    blocks = (heads, -(-seq_q // block), -(-seq_kv // block))
    if tuple(block_mask.shape) != blocks:
        raise BadArgument(f"ktune.block_sparse_attention: block_mask must be [heads, ceil(seq_q / block), "
                          f"ceil(seq_kv / block)] = {list(blocks)}, got {tuple(block_mask.shape)}")
    o = torch.empty_like(q, memory_format=torch.contiguous_format)
    lse = torch.empty((batch, heads, seq_q), dtype=torch.float32, device=q.device)
    scale_tensor = _constant(1.0 / math.sqrt(head_dim) if scale is None else float(scale), 1, torch.float32, q.device)
    # density_percent and pattern only describe the tuner's own masks: the defaults pick the
    # tuned configs of the nearest shape.
    _dispatch.run("block_sparse_attention", "block_sparse_attention", {"q": q, "k": k, "v": v}, {"o": o},
                  {"batch": batch, "heads": heads, "kv_heads": k.shape[1], "seq_q": seq_q, "seq_kv": seq_kv,
                   "head_dim": head_dim, "causal": int(bool(causal)), "block": block},
                  # Nonzero is kept, whatever the mask's dtype (a float 0.5 too, as the formula reads it).
                  extra={"lse": lse, "scale": scale_tensor, "block_mask": (block_mask != 0).to(torch.int32)})
    return o, lse


block_sparse_attention_op = _register(
    "block_sparse_attention(Tensor q, Tensor k, Tensor v, Tensor block_mask, int block, bool causal, float? scale) "
    "-> (Tensor, Tensor)", _block_sparse_attention,
    lambda q, *rest: (torch.empty_like(q, memory_format=torch.contiguous_format),
                      q.new_empty(q.shape[:3], dtype=torch.float32)))


def _moe_routing(logits, x, top_k, capacity_percent, renormalize):
    if logits.dim() != 2 or x.dim() != 2 or logits.shape[0] != x.shape[0] or not 1 <= top_k <= logits.shape[1] \
            or capacity_percent < 0:
        raise BadArgument(f"ktune.moe_routing: logits must be [tokens, experts] and x [tokens, hidden], 1 <= top_k <= "
                          f"experts, capacity_percent >= 0; got {tuple(logits.shape)}, {tuple(x.shape)}, top_k "
                          f"{top_k}, capacity_percent {capacity_percent}")
    if logits.dtype != x.dtype:
        raise BadArgument(f"ktune.moe_routing: logits ({logits.dtype}) and x ({x.dtype}) must have one dtype")
    tokens, experts = logits.shape
    ints = dict(dtype=torch.int32, device=x.device)
    outputs = {"weights": logits.new_empty((tokens, top_k), dtype=torch.float32),
               "expert_ids": torch.empty((tokens, top_k), **ints), "rows": torch.empty((tokens, top_k), **ints),
               "counts": torch.empty((experts,), **ints), "dropped": torch.empty((1,), **ints)}
    dispatched = x.new_empty((tokens * top_k, x.shape[1]))
    _dispatch.run("moe_routing", "moe_routing", {"logits": logits, "x": x}, {"dispatched": dispatched},
                  {"tokens": tokens, "experts": experts, "top_k": top_k, "hidden": x.shape[1],
                   "capacity_percent": capacity_percent, "renormalize": int(bool(renormalize))}, extra=outputs)
    return (outputs["weights"], outputs["expert_ids"], outputs["rows"], outputs["counts"], outputs["dropped"],
            dispatched)


moe_routing_op = _register(
    "moe_routing(Tensor logits, Tensor x, int top_k, int capacity_percent, bool renormalize) "
    "-> (Tensor, Tensor, Tensor, Tensor, Tensor, Tensor)", _moe_routing,
    lambda logits, x, top_k, capacity_percent, renormalize: (
        logits.new_empty((logits.shape[0], top_k), dtype=torch.float32),
        logits.new_empty((logits.shape[0], top_k), dtype=torch.int32),
        logits.new_empty((logits.shape[0], top_k), dtype=torch.int32),
        logits.new_empty((logits.shape[1],), dtype=torch.int32), logits.new_empty((1,), dtype=torch.int32),
        x.new_empty((logits.shape[0] * top_k, x.shape[1]))))


def _moe_combine(expert_out, weights, rows):
    if expert_out.dim() != 2 or weights.dim() != 2 or rows.shape != weights.shape \
            or expert_out.shape[0] != weights.numel():
        raise BadArgument(f"ktune.moe_combine: expert_out must be [tokens * top_k, hidden], weights and rows [tokens, "
                          f"top_k]; got {tuple(expert_out.shape)}, {tuple(weights.shape)}, {tuple(rows.shape)}")
    tokens, top_k = weights.shape
    if rows.device.type == "cpu" and rows.numel() and (int(rows.min()) < -1 or int(rows.max()) >= expert_out.shape[0]):
        # (On a GPU the rows are trusted: checking them would wait for the device.)
        raise BadArgument(f"ktune.moe_combine: rows must lie in [-1, {expert_out.shape[0]}) (rows of expert_out, -1 for "
                          f"dropped); they span [{int(rows.min())}, {int(rows.max())}]")
    y = expert_out.new_empty((tokens, expert_out.shape[1]))
    _dispatch.run("moe_combine", "moe_combine", {"expert_out": expert_out}, {"y": y},
                  {"tokens": tokens, "top_k": top_k, "hidden": expert_out.shape[1]},
                  extra={"weights": weights.float(), "rows": _int32(rows)})
    return y


moe_combine_op = _register("moe_combine(Tensor expert_out, Tensor weights, Tensor rows) -> Tensor", _moe_combine,
                           lambda expert_out, weights, rows: expert_out.new_empty((weights.shape[0],
                                                                                    expert_out.shape[1])))


# --- autograd: the kernel forward, PyTorch's recomputation backward --------------------------------

class _Recomputed(torch.autograd.Function):
    @staticmethod
    def forward(ctx, name, op, *args):
        ctx.name = name
        ctx.is_tensor = [torch.is_tensor(a) for a in args]
        ctx.constants = [None if t else a for a, t in zip(args, ctx.is_tensor)]
        ctx.save_for_backward(*[a for a in args if torch.is_tensor(a)])
        return op(*args)

    @staticmethod
    def backward(ctx, *grads):
        saved = iter(ctx.saved_tensors)
        # With create_graph the saved tensors themselves, so the gradients' graph reaches the inputs
        # (double backward); otherwise detached copies that ask for the gradients needed.
        graph = torch.is_grad_enabled()
        args = [(next(saved) if graph else next(saved).detach().requires_grad_(need)) if is_tensor else constant
                for is_tensor, constant, need in zip(ctx.is_tensor, ctx.constants, ctx.needs_input_grad[2:])]
        wanted = [a for a, is_tensor in zip(args, ctx.is_tensor) if is_tensor and a.requires_grad]
        with torch.enable_grad():
            outputs = REFERENCES[ctx.name](*args)
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        pairs = [(o, g) for o, g in zip(outputs, grads) if g is not None and o.requires_grad]
        computed = iter(torch.autograd.grad([o for o, _ in pairs], wanted, [g for _, g in pairs], allow_unused=True,
                                            create_graph=torch.is_grad_enabled())
                        if pairs and wanted else [None] * len(wanted))
        return (None, None) + tuple(next(computed) if is_tensor and a.requires_grad else None
                                    for a, is_tensor in zip(args, ctx.is_tensor))


# Devices whose attention backward is ktune's kernel (flash_attention_backward); elsewhere the
# backward recomputes PyTorch's formula. The CUDA kernel passes tests/python/test_torch_package_gpu.py
# (H200, 2026-12-05), but its tensor-core path reaches 0.27-0.51x FlashAttention 2's backward
# (reports/h200-backward-vulkan): CUDA joins once the backward is at least as fast as the
# formula's.
KERNEL_BACKWARD_DEVICES = {"cpu"}


class _AttentionWithKernelBackward(torch.autograd.Function):
    """flash_attention's forward kernel, and its backward kernel for the gradients (PyTorch's
    recomputation when a graph of the backward itself is wanted: double backward)."""

    @staticmethod
    def forward(ctx, q, k, v, causal, scale):
        o, lse = flash_attention_op(q, k, v, causal, scale)
        ctx.save_for_backward(q, k, v, o, lse)
        ctx.causal, ctx.scale = causal, scale
        return o

    @staticmethod
    def backward(ctx, grad_o):
        q, k, v, o, lse = ctx.saved_tensors
        if torch.is_grad_enabled():  # create_graph: the kernel's gradients have no graph of their own
            # The saved tensors themselves (not detached copies), so the gradients' graph reaches
            # the inputs and a second backward flows through it.
            needs = ctx.needs_input_grad[:3]
            with torch.enable_grad():
                out = _attention_reference(q, k, v, ctx.causal, ctx.scale)[0]
            wanted = [t for t, need in zip((q, k, v), needs) if need]
            computed = iter(torch.autograd.grad(out, wanted, grad_o, create_graph=True))
            return tuple(next(computed) if need else None for need in needs) + (None, None)
        dq, dk, dv = flash_attention_backward_op(q, k, v, o, grad_o.contiguous(), lse, ctx.causal, ctx.scale)
        return dq, dk, dv, None, None


def _call(name, op, *args):
    if torch.is_grad_enabled() and any(torch.is_tensor(a) and a.requires_grad for a in args):
        return _Recomputed.apply(name, op, *args)
    return op(*args)


def rms_norm(x, weight):
    """RMSNorm over the last dim: x / sqrt(mean(x²) + 1e-6) * weight."""
    return _call("rms_norm", rms_norm_op, x, weight)


def layer_norm(x, weight, bias):
    """LayerNorm over the last dim (biased variance, epsilon 1e-5) with weight and bias."""
    return _call("layer_norm", layer_norm_op, x, weight, bias)


def softmax(x):
    """Softmax over the last dim."""
    return _call("softmax", softmax_op, x)


def softmax_dropout(x, rng=None, generator=None):
    """Softmax over the last dim, then dropout with p = 0.1, the kept values scaled by 1/(1 - p). The
    mask is Philox4x32-10's under rng = int32 tensor (seed, offset) on x's device; by default a new
    one is drawn from PyTorch's generator (`generator`, else the device's default), so every call
    drops anew (and a CUDA graph replay draws anew, as PyTorch's own dropout does). The same rng
    gives the same mask on every backend."""
    if rng is None:
        rng = torch.randint(0, 2 ** 31 - 1, (2,), dtype=torch.int32, device=x.device, generator=generator)
    return _call("softmax_dropout", softmax_dropout_op, x, rng)


def swiglu(x):
    """silu(gate) * up, gate and up the two halves of the last dim of x."""
    return _call("swiglu", swiglu_op, x)


def geglu(x):
    """gelu(gate) * up (exact erf GELU), gate and up the two halves of the last dim of x."""
    return _call("geglu", geglu_op, x)


def rms_norm_rope(x, weight, cos, sin):
    """RMSNorm over each head (x [..., heads, head_dim], epsilon 1e-6) then NeoX rotary embedding with
    cos and sin [rows, head_dim/2], rows being x's leading dims flattened."""
    return _call("rms_norm_rope", rms_norm_rope_op, x, weight, cos, sin)


def linear(x, weight, bias=None, residual=None, activation="none"):
    """x·weightᵀ (+ bias) (then gelu or silu) (+ residual), one GEMM with its epilogue; weight is
    nn.Linear's [out_features, in_features]."""
    return _call("linear", linear_op, x, weight, bias, residual, activation)


def split_heads(qkv, heads, kv_heads=0, cos=None, sin=None):
    """A fused QKV projection's output [batch, seq, (heads + 2 kv_heads) * head_dim] (the q heads,
    then k's, then v's) as q [batch, heads, seq, head_dim] and k, v [batch, kv_heads, seq,
    head_dim], what flash_attention reads; q and k rotated by RoPE (NeoX halves, the token's index
    in its sequence as position) when cos and sin [seq, head_dim / 2] are given. One launch instead
    of a view, a rotation and three contiguous copies."""
    return _call("split_heads", split_heads_op, qkv, int(heads), int(kv_heads), cos, sin)


def merge_heads(x):
    """x [batch, heads, seq, head_dim] (attention's output) as token rows [batch, seq, heads * head_dim]."""
    return _call("merge_heads", merge_heads_op, x)


def flash_attention(q, k, v, causal=False, scale=None, return_lse=False):
    """softmax(scale·QKᵀ)V for q [batch, heads, seq_q, head_dim] and k, v [batch, kv_heads, seq_kv,
    head_dim] (grouped-query when kv_heads < heads); causal is bottom-right aligned as in the
    library. Returns o, or (o, lse) with lse the fp32 log-sum-exp of each query row. Its gradients
    come from ktune's backward kernel on the devices of KERNEL_BACKWARD_DEVICES (when o alone is
    returned), else from PyTorch recomputing the formula."""
    wants_grad = torch.is_grad_enabled() and any(t.requires_grad for t in (q, k, v))
    if wants_grad and not return_lse and q.device.type in KERNEL_BACKWARD_DEVICES:
        return _AttentionWithKernelBackward.apply(q, k, v, bool(causal), scale)
    o, lse = _call("flash_attention", flash_attention_op, q, k, v, bool(causal), scale)
    return (o, lse) if return_lse else o


def flash_attention_backward(q, k, v, o, dout, lse, causal=False, scale=None):
    """The gradients (dq, dk, dv) of flash_attention's o given dout, from the forward's o and fp32
    lse (return_lse=True), in one call; dk and dv summed over each kv head's query heads."""
    return flash_attention_backward_op(q, k, v, o, dout, lse, bool(causal), scale)


def ffn(x, w1, b1, w2, b2, activation="gelu"):
    """act(x·w1ᵀ + b1)·w2ᵀ + b2 in one launch where the backend fuses it (gelu, gelu_tanh or silu)."""
    return _call("ffn", ffn_op, x, w1, b1, w2, b2, activation)


def attention_block(x, w_qkv, b_qkv, w_o, b_o, heads, kv_heads=0, causal=False, cos=None, sin=None, residual=True):
    """An attention sub-block in one library call: (x +) attention(RoPE(x·w_qkvᵀ + b_qkv))·w_oᵀ + b_o for
    x [batch, seq, hidden]; w_qkv [(heads + 2 kv_heads) * head_dim, hidden] holds the q rows, then k,
    then v (kv_heads 0: as many as heads), w_o [hidden, heads * head_dim]; the biases may be None; cos
    and sin [seq, head_dim / 2] rotate q and k (NeoX convention) when given; causal masks later
    tokens; residual adds x. The library runs it as ktune's tuned gemm, split_heads,
    flash_attention, merge_heads and gemm."""
    return _call("attention_block", attention_block_op, x, w_qkv, b_qkv, w_o, b_o, int(heads), int(kv_heads),
                 bool(causal), cos, sin, bool(residual))


def layer_norm_linear(x, gamma, beta, weight, bias):
    """LayerNorm(x) (epsilon 1e-5)·weightᵀ + bias, the normalisation fused into the GEMM."""
    return _call("layer_norm_linear", layer_norm_linear_op, x, gamma, beta, weight, bias)


def paged_attention(q, k_cache, v_cache, block_table, seq_lens, scale=None, return_lse=False):
    """Decode attention over a paged KV cache: q [batch, heads, head_dim] (one token a sequence),
    the caches [pages, page_size, kv_heads, head_dim], block_table [batch, max_pages] and seq_lens
    [batch] (int32, or converted). Returns o, or (o, lse)."""
    o, lse = _call("paged_attention", paged_attention_op, q, k_cache, v_cache, block_table, seq_lens, scale)
    return (o, lse) if return_lse else o


def grouped_gemm(a, b, group_sizes):
    """Each group's rows of a [m, k] (groups in order, group_sizes[g] rows each) times its weight
    b[g] [n, k] transposed: a mixture-of-experts layer's GEMMs in one call. The sizes may sum to
    less than m (moe_routing's dispatched rows past the kept ones): the rows of the result past
    them are left unwritten."""
    return _call("grouped_gemm", grouped_gemm_op, a, b, group_sizes)


def block_sparse_attention(q, k, v, block_mask, block, causal=False, scale=None, return_lse=False):
    """flash_attention restricted by a block mask: block_mask [heads, ceil(seq_q / block),
    ceil(seq_kv / block)] (nonzero: query block i of a head sees key block j), the same for every
    sequence; blocks that are off cost nothing. A row that sees no key gets o = 0 (lse +inf)."""
    o, lse = _call("block_sparse_attention", block_sparse_attention_op, q, k, v, block_mask, int(block), bool(causal),
                   scale)
    return (o, lse) if return_lse else o


def moe_routing(logits, x, top_k, capacity_percent=125, renormalize=True):
    """A mixture-of-experts router: from logits [tokens, experts] and x [tokens, hidden], each
    token's top_k experts (largest logit first, the lower index among equal ones) with their
    softmax weights (renormalize: over the chosen ones), a capacity per expert of capacity_percent
    of an even share (0: none; earlier tokens kept first), and x's rows in expert-contiguous order.
    Returns (weights [tokens, top_k] fp32, expert_ids, rows (-1: dropped), counts [experts],
    dropped [1], dispatched [tokens * top_k, hidden]); counts are grouped_gemm's group sizes."""
    return _call("moe_routing", moe_routing_op, logits, x, int(top_k), int(capacity_percent), bool(renormalize))


def moe_combine(expert_out, weights, rows):
    """moe_routing's inverse: y[t] = sum over k of weights[t, k] * expert_out[rows[t, k]], rows of -1
    (dropped) adding nothing; expert_out [tokens * top_k, hidden] in the dispatched order."""
    return _call("moe_combine", moe_combine_op, expert_out, weights, rows)


def instance_norm(x, weight, bias):
    """InstanceNorm2d of NCHW x (epsilon 1e-5) with a per-channel weight and bias."""
    return _call("instance_norm", instance_norm_op, x, weight, bias)
