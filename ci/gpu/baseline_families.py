"""PyTorch baselines for ktune's GPU benchmark, measured the way ktune measures: CUDA events
around one call, L2 flushed before each sample, median of many samples.

Prints one JSON object: {"device", "torch", "rows", "cols", "heads", "head_dim", "families",
"results": {name: {"median_ns", "bytes", "tb_s"}}}; a case that fails records
"<name>_error" (eager) or "<name>_compile_error" (torch.compile) with the message instead.
Usage: python3 -m ci.gpu.baseline_families ROWS COLS [--families a,b,...]
  ROWS x COLS bf16: the tensor of the row families (for swiglu/geglu the input is
  [ROWS, 2*COLS] and the output [ROWS, COLS]); rmsnorm_rope takes heads = COLS / 128 and
  head_dim = 128 (the same [ROWS, COLS] tensor). "copy" (a same-sized ROWS x COLS copy) and
  "copy_1GiB" are measured whatever --families says.
"""
import argparse
import json
import statistics

import torch
import torch.nn.functional as F

FAMILIES = ["rmsnorm", "layernorm", "residual_layernorm", "softmax", "softmax_dropout", "swiglu", "geglu",
            "rmsnorm_rope"]
ROPE_HEAD_DIM = 128
# The constants of the ktune families (kernels/<family>/<family>.hpp).
RMSNORM_EPS = 1e-6          # kRmsNormEpsilon, kRmsNormRopeEpsilon
LAYERNORM_EPS = 1e-5        # kLayerNormEpsilon, kResidualLayerNormEpsilon
SOFTMAX_DROPOUT_P = 0.1     # kSoftmaxDropoutP


def timed(fn, samples=50, flush_l2=True):
    """Median ns of `samples` calls between CUDA events after 5 warm-up calls; with flush_l2,
    twice the L2 is written before each sample (memory-bound kernels are timed cold)."""
    flush = torch.empty(2 * torch.cuda.get_device_properties(0).L2_cache_size, dtype=torch.uint8,
                        device="cuda") if flush_l2 else None
    for _ in range(5):
        fn()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(samples):
        if flush is not None:
            flush.zero_()
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) * 1e6)
    return statistics.median(times)


def make_cases(rows, cols, families, device="cuda", dtype=torch.bfloat16):
    """{family: (fn, arg, model bytes)} for the requested families. Bytes as ktune's
    KernelFamily::byte_count counts them: each tensor of the family (inputs read once, outputs
    written once) at the element size. Separate from the timing so the math can be checked on
    any device."""
    element = torch.empty((), dtype=dtype).element_size()
    n = rows * cols
    gen = torch.Generator(device=device).manual_seed(0)

    def randn(*shape):
        return torch.randn(*shape, device=device, dtype=dtype, generator=gen)

    def rand(*shape, low, high):
        return (torch.rand(*shape, device=device, generator=gen) * (high - low) + low).to(dtype)

    cases = {}
    wanted = set(families)
    if wanted & {"rmsnorm", "layernorm", "residual_layernorm", "softmax", "softmax_dropout"}:
        x = randn(rows, cols)
        weight = rand(cols, low=0.5, high=1.5)
        bias = randn(cols)
    if "rmsnorm" in wanted:
        def rmsnorm(t):
            return F.rms_norm(t, (cols,), weight, eps=RMSNORM_EPS)
        cases["rmsnorm"] = (rmsnorm, x, (2 * n + cols) * element)  # x, weight, out
    if "layernorm" in wanted:
        def layernorm(t):
            return F.layer_norm(t, (cols,), weight, bias, eps=LAYERNORM_EPS)
        cases["layernorm"] = (layernorm, x, (2 * n + 2 * cols) * element)  # x, gamma, beta, out
    if "residual_layernorm" in wanted:
        residual = randn(rows, cols)

        def residual_layernorm(t):
            s = t + residual
            return F.layer_norm(s, (cols,), weight, bias, eps=LAYERNORM_EPS), s
        # x, residual, gamma, beta, out, sum
        cases["residual_layernorm"] = (residual_layernorm, x, (4 * n + 2 * cols) * element)
    if "softmax" in wanted:
        def softmax(t):
            return torch.softmax(t, dim=-1)
        cases["softmax"] = (softmax, x, 2 * n * element)  # x, out
    if "softmax_dropout" in wanted:
        # ktune: out = keep ? softmax(x) / (1 - p) : 0 with p = 0.1 and a Philox mask; F.dropout in
        # training mode does the same scaling with PyTorch's own generator (another mask, the same
        # work). Eager also writes the mask (native_dropout returns it); that is what eager costs.
        def softmax_dropout(t):
            return F.dropout(torch.softmax(t, dim=-1), p=SOFTMAX_DROPOUT_P, training=True)
        cases["softmax_dropout"] = (softmax_dropout, x, 2 * n * element)  # x, out
    if wanted & {"swiglu", "geglu"}:
        x2 = randn(rows, 2 * cols)
    if "swiglu" in wanted:
        def swiglu(t):
            gate, up = t.chunk(2, dim=-1)
            return F.silu(gate) * up
        cases["swiglu"] = (swiglu, x2, 3 * n * element)  # x [rows, 2 cols], out [rows, cols]
    if "geglu" in wanted:
        def geglu(t):
            gate, up = t.chunk(2, dim=-1)
            return F.gelu(gate) * up  # exact (erf) GELU, as the family
        cases["geglu"] = (geglu, x2, 3 * n * element)
    if "rmsnorm_rope" in wanted and cols % ROPE_HEAD_DIM == 0:
        head_dim = ROPE_HEAD_DIM
        heads, half = cols // head_dim, head_dim // 2
        q = randn(rows, cols)
        head_weight = rand(head_dim, low=0.5, high=1.5)
        # The rotary tables a model precomputes once per sequence (position = row index,
        # base 10000), [rows, head_dim / 2] as the family takes them: outside the timed call.
        inv_freq = 1.0 / (10000.0 ** (torch.arange(0, head_dim, 2, device=device, dtype=torch.float32) / head_dim))
        angles = torch.outer(torch.arange(rows, device=device, dtype=torch.float32), inv_freq)
        cos, sin = angles.cos().to(dtype), angles.sin().to(dtype)
        cos_b, sin_b = cos[:, None, :], sin[:, None, :]  # broadcast over heads

        def rmsnorm_rope(t):
            # RMSNorm over each head's head_dim (QK-norm), then NeoX / Llama rotate_half RoPE:
            # out[i] = y[i] c[i] - y[i + half] s[i], out[i + half] = y[i + half] c[i] + y[i] s[i].
            y = F.rms_norm(t.view(rows, heads, head_dim), (head_dim,), head_weight, eps=RMSNORM_EPS)
            y1, y2 = y[..., :half], y[..., half:]
            return torch.cat((y1 * cos_b - y2 * sin_b, y2 * cos_b + y1 * sin_b), dim=-1).view(rows, cols)
        # x, weight [head_dim], cos and sin [rows, head_dim / 2], out
        cases["rmsnorm_rope"] = (rmsnorm_rope, q, (2 * n + head_dim + rows * head_dim) * element)
    return cases


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("rows", type=int)
    parser.add_argument("cols", type=int)
    parser.add_argument("--families", default=",".join(FAMILIES),
                        help="comma-separated families (default: all of " + ",".join(FAMILIES) + ")")
    args = parser.parse_args()
    families = [f for f in args.families.split(",") if f]
    unknown = [f for f in families if f not in FAMILIES]
    if unknown:
        parser.error(f"unknown families {unknown}; known: {FAMILIES}")
    if args.rows < 1 or args.cols < 1:
        parser.error("ROWS and COLS must be at least 1")
    rows, cols = args.rows, args.cols
    dtype = torch.bfloat16
    torch.manual_seed(0)
    results = {}

    def record(name, fn, nbytes):
        ns = timed(fn)
        results[name] = {"median_ns": ns, "bytes": nbytes, "tb_s": nbytes / ns / 1e3}

    x = torch.randn(rows, cols, device="cuda", dtype=dtype)
    copy_out = torch.empty_like(x)
    record("copy", lambda: copy_out.copy_(x), 2 * x.numel() * x.element_size())
    del x, copy_out
    big = torch.empty(1 << 30, dtype=torch.uint8, device="cuda")
    big_out = torch.empty_like(big)
    record("copy_1GiB", lambda: big_out.copy_(big), 2 * big.numel())
    del big, big_out

    if "rmsnorm_rope" in families and cols % ROPE_HEAD_DIM:
        results["rmsnorm_rope_error"] = f"cols={cols} is not a multiple of head_dim={ROPE_HEAD_DIM}"
    cases = make_cases(rows, cols, families, dtype=dtype)
    for name in families:
        if name not in cases:
            continue
        fn, arg, nbytes = cases[name]
        try:
            record(f"{name}_eager", lambda fn=fn, arg=arg: fn(arg), nbytes)
        except Exception as error:  # out of memory, say: report, do not fail
            results[f"{name}_error"] = f"{type(error).__name__}: {str(error)[:300]}"
        try:
            compiled = torch.compile(fn)
            record(f"{name}_compile", lambda compiled=compiled, arg=arg: compiled(arg), nbytes)
        except Exception as error:  # torch.compile needs a working Triton; report, do not fail
            results[f"{name}_compile_error"] = f"{type(error).__name__}: {str(error)[:300]}"
        torch.cuda.empty_cache()
    heads = cols // ROPE_HEAD_DIM if cols % ROPE_HEAD_DIM == 0 else None
    print(json.dumps({"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
                      "rows": rows, "cols": cols, "dtype": "bf16",
                      "heads": heads, "head_dim": ROPE_HEAD_DIM if heads else None,
                      "families": families, "results": results}))


if __name__ == "__main__":
    main()
