"""The Python package (python/ktune) against PyTorch on the CPU, with Debian's python3-torch:

- every op at odd shapes in fp32 and bf16, against PyTorch's formula evaluated in float64 (relative
  L2 error under design.md's tolerance for the precision);
- the ops as torch.library ops (torch.ops.ktune.*) and their Meta shapes, autograd through them;
- clear errors for bad input;
- the modules swapped into a small model with the same state dict give the same outputs;
- tuning from Python: ktune.tune into a database, a later process running the tuned config
  without tuning, and tuning on first use;
- `pip install` of the package into a virtual environment, the library inside it.

Run by ctest as: python3 test_torch_package.py --ktune PATH --library LIBKTUNE_KERNELS --source-dir DIR
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
import warnings

ARGS = None


def setUpModule():
    global torch, F, nn, ktune, formulas, ops, op_cases, relative_l2
    try:
        import torch
    except ImportError:
        raise SystemExit(f"{sys.executable} has no torch: install Debian's python3-torch (ci/install-deps --tests)")
    import torch.nn.functional as F
    from torch import nn
    os.environ["KTUNE_LIBRARY"] = ARGS.library
    os.environ["KTUNE_BIN"] = ARGS.ktune
    os.environ.pop("KTUNE_DB", None)
    os.environ.pop("KTUNE_AUTOTUNE", None)
    sys.path.insert(0, os.path.join(ARGS.source_dir, "python"))
    import ktune
    from ktune import formulas, ops
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import op_cases
    from op_cases import relative_l2


class Ops(unittest.TestCase):
    def test_every_op_at_odd_shapes(self):
        g = torch.Generator().manual_seed(7)
        for precision in ("fp32", "bf16"):
            dtype = op_cases.DTYPES[precision]
            with self.subTest(precision=precision):
                for name, args, out_index in op_cases.cases(
                        op_cases.Sizes(large=False),
                        lambda *shape, **kw: op_cases.random(*shape, dtype=dtype, generator=g, **kw),
                        lambda rows, half: torch.arange(rows, dtype=torch.float64)[:, None] * torch.rand(
                            half, generator=g, dtype=torch.float64)):
                    op_cases.check(self, ktune, name, args, precision, out_index)

    def test_attention_backward_kernel(self):
        g = torch.Generator().manual_seed(12)
        for precision in ("fp32", "bf16"):
            dtype = op_cases.DTYPES[precision]
            op_cases.check_attention_backward(
                self, ktune, lambda *shape, **kw: op_cases.random(*shape, dtype=dtype, generator=g, **kw), precision)

    def test_softmax_dropout_drops_about_p(self):
        x = torch.randn(64, 1000)
        out = ktune.softmax_dropout(x)
        dropped = float((out == 0).double().mean())
        self.assertGreater(dropped, 0.08)
        self.assertLess(dropped, 0.12)
        # A new mask per call (a training step), the same one for the same rng.
        self.assertFalse(torch.equal(out == 0, ktune.softmax_dropout(x) == 0))
        rng = torch.tensor([7, 11], dtype=torch.int32)
        self.assertTrue(torch.equal(ktune.softmax_dropout(x, rng), ktune.softmax_dropout(x, rng)))
        self.assertFalse(torch.equal(ktune.softmax_dropout(x, rng) == 0,
                                     ktune.softmax_dropout(x, torch.tensor([7, 12], dtype=torch.int32)) == 0))
        # The gradient drops what the forward dropped: PyTorch's autograd of the formula, same rng.
        weights = torch.randn(64, 1000, dtype=torch.float64)
        leaf = x.clone().requires_grad_()
        (ktune.softmax_dropout(leaf, rng).double() * weights).sum().backward()
        want = x.double().requires_grad_()
        (formulas.REFERENCES["softmax_dropout"](want, rng) * weights).sum().backward()
        self.assertLess(relative_l2(leaf.grad, want.grad), 1e-5)
        with self.assertRaisesRegex(ktune.BadArgument, "rng must be 2 int32 values"):
            ktune.softmax_dropout(x, torch.tensor([1.0, 2.0]))

    def test_non_contiguous_inputs(self):
        x = torch.randn(33, 20).t()  # [20, 33], not contiguous
        w = torch.rand(33) + 0.5
        self.assertLess(relative_l2(ktune.rms_norm(x, w), formulas.REFERENCES["rms_norm"](x.double(), w.double())), 1e-5)


class TorchLibrary(unittest.TestCase):
    def test_registered_ops_and_meta_shapes(self):
        x, w = torch.randn(4, 6), torch.rand(6) + 0.5
        self.assertTrue(torch.equal(torch.ops.ktune.rms_norm(x, w), ktune.rms_norm(x, w)))
        meta = torch.ops.ktune.swiglu(torch.empty(3, 5, 8, device="meta"))
        self.assertEqual((meta.device.type, tuple(meta.shape)), ("meta", (3, 5, 4)))
        o, lse = torch.ops.ktune.flash_attention(torch.empty(2, 4, 9, 16, device="meta"),
                                                 torch.empty(2, 2, 11, 16, device="meta"),
                                                 torch.empty(2, 2, 11, 16, device="meta"), True, None)
        self.assertEqual((tuple(o.shape), tuple(lse.shape), lse.dtype), ((2, 4, 9, 16), (2, 4, 9), torch.float32))
        d = torch.ops.ktune.linear(torch.empty(5, 7, 3, device="meta"), torch.empty(11, 3, device="meta"), None, None,
                                   "none")
        self.assertEqual(tuple(d.shape), (5, 7, 11))
        routed = torch.ops.ktune.moe_routing(torch.empty(7, 8, device="meta"), torch.empty(7, 5, device="meta"), 2, 125,
                                             True)
        self.assertEqual([tuple(t.shape) for t in routed], [(7, 2), (7, 2), (7, 2), (8,), (1,), (14, 5)])
        self.assertEqual([t.dtype for t in routed[:5]], [torch.float32] + [torch.int32] * 4)

    def test_compiled(self):
        if not hasattr(torch, "compile"):
            self.skipTest(f"torch {torch.__version__} has no torch.compile")
        x, w = torch.randn(4, 6), torch.rand(6) + 0.5
        compiled = torch.compile(lambda a, b: ktune.rms_norm(a, b) * 2)
        self.assertTrue(torch.allclose(compiled(x, w), ktune.rms_norm(x, w) * 2))

    def test_split_and_merge_heads_are_pytorchs_layouts(self):
        # Written here as a model does it (view, split, NeoX rotation by position, transpose),
        # apart from ktune.formulas: the outputs and, through the recomputed backward, the
        # gradient of the fused projection.
        batch, seq, heads, kv, dim = 2, 5, 4, 2, 8
        qkv = torch.randn(batch, seq, (heads + 2 * kv) * dim, requires_grad=True)
        angle = torch.rand(seq, dim // 2) * 3
        cos, sin = angle.cos(), angle.sin()

        def pytorch(t):
            q, k, v = t.view(batch, seq, heads + 2 * kv, dim).split([heads, kv, kv], dim=2)
            c, s = cos[None, :, None, :], sin[None, :, None, :]

            def rope(x):
                return torch.cat((x[..., :dim // 2] * c - x[..., dim // 2:] * s,
                                  x[..., dim // 2:] * c + x[..., :dim // 2] * s), -1)
            return rope(q).transpose(1, 2), rope(k).transpose(1, 2), v.transpose(1, 2)

        weights = [torch.randn(batch, n, seq, dim) for n in (heads, kv, kv)]
        got = ktune.split_heads(qkv, heads, kv, cos, sin)
        sum((o * w).sum() for o, w in zip(got, weights)).backward()
        grad = qkv.grad.clone()
        qkv.grad = None
        want = pytorch(qkv)
        sum((o * w).sum() for o, w in zip(want, weights)).backward()
        for g, w in zip(got, want):
            self.assertLess(relative_l2(g, w), 1e-6)
        self.assertLess(relative_l2(grad, qkv.grad), 1e-6)
        o = torch.randn(batch, heads, seq, dim, requires_grad=True)
        merged = ktune.merge_heads(o)
        self.assertTrue(torch.equal(merged, o.transpose(1, 2).reshape(batch, seq, heads * dim)))
        merged.pow(2).sum().backward()
        self.assertTrue(torch.allclose(o.grad, 2 * o))
        with self.assertRaisesRegex(ktune.BadArgument, "kv_heads dividing heads"):
            ktune.split_heads(qkv.detach(), 3, 2)
        with self.assertRaisesRegex(ktune.BadArgument, "cos and sin must both be given"):
            ktune.split_heads(qkv.detach(), heads, kv, cos, None)

    def test_autograd_matches_pytorch(self):
        x = torch.randn(5, 12, dtype=torch.float32, requires_grad=True)
        w = (torch.rand(12) + 0.5).requires_grad_()
        b = torch.randn(12, requires_grad=True)
        ktune.layer_norm(x, w, b).pow(2).sum().backward()
        got = [t.grad.clone() for t in (x, w, b)]
        for t in (x, w, b):
            t.grad = None
        F.layer_norm(x, (12,), w, b, 1e-5).pow(2).sum().backward()
        for g, t in zip(got, (x, w, b)):
            self.assertLess(relative_l2(g, t.grad), 1e-5)
        q = torch.randn(1, 2, 5, 8, requires_grad=True)
        k = torch.randn(1, 1, 6, 8, requires_grad=True)
        v = torch.randn(1, 1, 6, 8, requires_grad=True)
        ktune.flash_attention(q, k, v, causal=True).sum().backward()
        self.assertEqual([tuple(t.grad.shape) for t in (q, k, v)], [(1, 2, 5, 8), (1, 1, 6, 8), (1, 1, 6, 8)])
        # Attention's gradients from ktune's backward kernel (on the CPU), at odd lengths with
        # grouped-query heads and the causal mask, against PyTorch's autograd of the formula in
        # float64; double backward through PyTorch's recomputation.
        self.assertIn("cpu", ops.KERNEL_BACKWARD_DEVICES)
        for causal in (False, True):
            for dtype, tolerance in ((torch.float32, 1e-5), (torch.bfloat16, 2e-2)):
                q = (torch.rand(2, 4, 37, 16, dtype=torch.float64) * 4 - 2).to(dtype).requires_grad_()
                k = (torch.rand(2, 2, 45, 16, dtype=torch.float64) * 4 - 2).to(dtype).requires_grad_()
                v = torch.rand(2, 2, 45, 16, dtype=torch.float64).to(dtype).requires_grad_()
                dout = torch.rand(2, 4, 37, 16, dtype=torch.float64).to(dtype)
                got = torch.autograd.grad(ktune.flash_attention(q, k, v, causal=causal), (q, k, v), dout)
                exact = [t.detach().double().requires_grad_() for t in (q, k, v)]
                want = torch.autograd.grad(formulas.REFERENCES["flash_attention"](*exact, causal, None)[0], exact,
                                           dout.double())
                for g, w in zip(got, want):
                    self.assertEqual(g.dtype, dtype)
                    self.assertLess(relative_l2(g, w), tolerance, f"causal {causal} {dtype}")
        second = []
        for attention in (lambda a, b, c: ktune.flash_attention(a, b, c, causal=True),
                          lambda a, b, c: formulas.REFERENCES["flash_attention"](a, b, c, True, None)[0]):
            q, k, v = (torch.randn(1, 2, 5, 8, generator=torch.Generator().manual_seed(s), requires_grad=True)
                       for s in (1, 2, 3))
            grad_q, = torch.autograd.grad(attention(q, k, v).pow(2).sum(), q, create_graph=True)
            second.append(torch.autograd.grad(grad_q.pow(2).sum(), (q, k, v)))
        for g, w in zip(*second):
            self.assertLess(relative_l2(g, w), 1e-4)
        # Double backward through an op whose backward is PyTorch's recomputation: its gradients'
        # graph reaches the inputs.
        second = []
        for norm in (ktune.layer_norm, formulas.REFERENCES["layer_norm"]):
            x = torch.randn(5, 12, generator=torch.Generator().manual_seed(4), requires_grad=True)
            w = (torch.rand(12, generator=torch.Generator().manual_seed(5)) + 0.5).requires_grad_()
            b = torch.randn(12, generator=torch.Generator().manual_seed(6), requires_grad=True)
            grad_x, = torch.autograd.grad(norm(x, w, b).pow(3).sum(), x, create_graph=True)
            second.append(torch.autograd.grad(grad_x.pow(2).sum(), (x, w)))
        for g, want in zip(*second):
            self.assertLess(relative_l2(g, want), 1e-4)
        # MoE routing: the weights' gradient reaches the logits, the dispatched rows' reaches x.
        logits, x = torch.randn(9, 8, requires_grad=True), torch.randn(9, 5, requires_grad=True)
        weights, ids, _, _, _, dispatched = ktune.moe_routing(logits, x, 2, 100, True)
        self.assertFalse(ids.requires_grad)
        (weights.pow(2).sum() + dispatched.pow(3).sum()).backward()
        got = [logits.grad.clone(), x.grad.clone()]
        logits.grad = x.grad = None
        weights, _, _, _, _, dispatched = formulas.REFERENCES["moe_routing"](logits, x, 2, 100, True)
        (weights.pow(2).sum() + dispatched.pow(3).sum()).backward()
        for g, t in zip(got, (logits, x)):
            self.assertLess(relative_l2(g, t.grad), 1e-5)


class Errors(unittest.TestCase):
    def test_bad_input_names_the_argument(self):
        with self.assertRaisesRegex(ktune.BadArgument, "last dim of x is"):
            ktune.rms_norm(torch.randn(3, 5), torch.ones(4))
        with self.assertRaisesRegex(ValueError, "mix dtypes"):
            ktune.rms_norm(torch.randn(3, 4), torch.ones(4, dtype=torch.bfloat16))
        with self.assertRaisesRegex(ktune.BadArgument, "float64 is not supported"):
            ktune.softmax(torch.randn(3, 4, dtype=torch.float64))
        with self.assertRaisesRegex(ktune.BadArgument, "activation"):
            ktune.linear(torch.randn(2, 3), torch.randn(4, 3), None, None, "gelu")
        with self.assertRaisesRegex(ktune.BadArgument, "must be even"):
            ktune.swiglu(torch.randn(2, 5))
        context = ktune.shared_context("cpu")
        with self.assertRaisesRegex(ktune.BadArgument, "not one of its values"):
            context.use_config("rmsnorm", {"rows": 8, "cols": 64}, "fp32",
                               dict(context.choose("rmsnorm", {"rows": 8, "cols": 64}, "fp32")["config"], threads=-3))
        with self.assertRaisesRegex(ktune.BadArgument, "is not a parameter"):
            context.use_config("rmsnorm", {"rows": 8, "cols": 64}, "fp32",
                               dict(context.choose("rmsnorm", {"rows": 8, "cols": 64}, "fp32")["config"], bogus=1))
        with self.assertRaisesRegex(ktune.NoDevice, "hip"):
            ktune.Context("hip")
        # The new families' inputs: shapes that do not fit, an lse of another dtype, rows or group
        # sizes past their tensors (on the CPU, where checking them costs nothing).
        q, k = torch.randn(2, 4, 5, 8), torch.randn(1, 2, 6, 8)
        with self.assertRaisesRegex(ktune.BadArgument, "flash_attention_backward: q must be"):
            ktune.flash_attention_backward(q, k, k, q, q, torch.zeros(2, 4, 5))
        k = torch.randn(2, 2, 6, 8)
        with self.assertRaisesRegex(ktune.BadArgument, "lse must be float32"):
            ktune.flash_attention_backward(q, k, k, q, q, torch.zeros(2, 4, 5, dtype=torch.bfloat16))
        with self.assertRaisesRegex(ktune.BadArgument, r"block_mask must be \[heads"):
            ktune.block_sparse_attention(q, k, k, torch.ones(4, 2, 2), 16)
        with self.assertRaisesRegex(ktune.BadArgument, r"rows must lie in \[-1, 6\)"):
            ktune.moe_combine(torch.randn(6, 4), torch.rand(3, 2), torch.tensor([[0, 1], [2, 6], [-1, 3]]))
        with self.assertRaisesRegex(ktune.BadArgument, "group_sizes sum to 9, more than a's 8 rows"):
            ktune.grouped_gemm(torch.randn(8, 4), torch.randn(2, 3, 4), torch.tensor([4, 5], dtype=torch.int32))
        with self.assertRaisesRegex(ValueError, "MixtureOfExperts: top_k=3"):
            ktune.nn.MixtureOfExperts(8, 16, 2, top_k=3)


class Modules(unittest.TestCase):
    def test_state_dict_swap_gives_the_same_outputs(self):
        torch.manual_seed(3)

        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.norm = nn.LayerNorm(48)
                self.attn = nn.MultiheadAttention(48, 4, batch_first=True)
                self.mlp = nn.Sequential(nn.Linear(48, 96), nn.GELU(), nn.Linear(96, 48))

            def forward(self, x):
                h = self.norm(x)
                x = x + self.attn(h, h, h, need_weights=False)[0]
                return x + self.mlp(x)

        reference = Block().eval()
        swapped = Block().eval()
        swapped.load_state_dict(reference.state_dict())
        ktune.nn.replace_modules(swapped)
        self.assertIsInstance(swapped.norm, ktune.nn.LayerNorm)
        self.assertIsInstance(swapped.attn, ktune.nn.FusedAttention)
        fused = ktune.nn.FusedFFN(48, 96)
        fused.load_state_dict({"fc1.weight": reference.mlp[0].weight, "fc1.bias": reference.mlp[0].bias,
                               "fc2.weight": reference.mlp[2].weight, "fc2.bias": reference.mlp[2].bias})
        swapped.mlp = fused
        x = torch.randn(2, 13, 48)
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("error")  # the fused paths, no fallback
            self.assertLess(relative_l2(swapped(x), reference(x)), 1e-5)
            # Sequence-first, cross-attention and causal, against PyTorch's own module.
            attn = nn.MultiheadAttention(48, 4).eval()
            fused_attn = ktune.nn.FusedAttention(48, 4).eval()
            fused_attn.load_state_dict(attn.state_dict())
            q, kv = torch.randn(9, 2, 48), torch.randn(11, 2, 48)
            self.assertLess(relative_l2(fused_attn(q, kv, kv, need_weights=False)[0],
                                        attn(q, kv, kv, need_weights=False)[0]), 1e-5)
            mask = torch.ones(9, 9, dtype=torch.bool).triu(1)
            self.assertLess(relative_l2(fused_attn(q, q, q, need_weights=False, is_causal=True)[0],
                                        attn(q, q, q, need_weights=False, attn_mask=mask)[0]), 1e-5)
            # An odd head size: self-attention through the separate calls (attention_block splits even heads).
            attn, fused_attn = nn.MultiheadAttention(18, 6).eval(), ktune.nn.FusedAttention(18, 6).eval()
            fused_attn.load_state_dict(attn.state_dict())
            q = torch.randn(7, 2, 18)
            self.assertLess(relative_l2(fused_attn(q, q, q, need_weights=False)[0],
                                        attn(q, q, q, need_weights=False)[0]), 1e-5)

        norm, fused_norm = nn.InstanceNorm2d(5, affine=True), ktune.nn.FusedInstanceNorm2d(5, affine=True)
        with torch.no_grad():
            norm.weight.uniform_(0.5, 1.5)
            norm.bias.uniform_(-1, 1)
        fused_norm.load_state_dict(norm.state_dict())
        image = torch.randn(3, 5, 9, 11)
        self.assertLess(relative_l2(fused_norm(image), norm(image)), 1e-5)

        llama_mlp = nn.ModuleDict({n: nn.Linear(32, 80 if n != "down_proj" else 32, bias=False)
                                   for n in ("gate_proj", "up_proj")})
        llama_mlp["down_proj"] = nn.Linear(80, 32, bias=False)
        swiglu = ktune.nn.SwiGLU(32, 80)
        swiglu.load_state_dict(llama_mlp.state_dict())
        x = torch.randn(6, 32)
        want = llama_mlp["down_proj"](F.silu(llama_mlp["gate_proj"](x)) * llama_mlp["up_proj"](x))
        self.assertLess(relative_l2(swiglu(x), want), 1e-5)

        rms = ktune.nn.RMSNorm(32)
        self.assertEqual(list(rms.state_dict()), ["weight"])
        self.assertLess(relative_l2(rms(x), x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)), 1e-5)

    def test_mixture_of_experts(self):
        """Mixtral's sparse MoE block on ktune's routing, grouped GEMMs, swiglu and combine: against
        PyTorch over each expert's tokens in float64, with a capacity that drops choices, with
        Hugging Face's weights layout, and its gradients."""
        torch.manual_seed(8)
        block = ktune.nn.MixtureOfExperts(24, 40, 8, top_k=2)
        exact = ktune.nn.MixtureOfExperts(24, 40, 8, top_k=2).double()
        exact.load_state_dict({name: t.double() for name, t in block.state_dict().items()})
        x = torch.randn(3, 37, 24)
        for dtype, tolerance in ((torch.float32, 1e-5), (torch.bfloat16, 2e-2)):
            block.to(dtype)
            got = block(x.to(dtype))
            self.assertEqual((got.dtype, got.shape), (dtype, x.shape))
            want = exact.reference(x.to(dtype).double().reshape(-1, 24)).reshape(x.shape)
            self.assertLess(relative_l2(got, want), tolerance, dtype)
            self.assertEqual(int(block.last_dropped), 0)
        # A capacity of half an even share: choices dropped, each adding nothing.
        block.float()
        block.capacity_percent = exact.capacity_percent = 50
        flat = x.reshape(-1, 24)
        got = block(flat)
        self.assertGreater(int(block.last_dropped), 0)
        rows = ktune.moe_routing(ops.linear(flat, block.gate.weight), flat, 2, 50, True)[2]
        # In float32 with the same logits: which choices a capacity keeps cascades from the order
        # of the logits, which float64 ones may not share.
        self.assertLess(relative_l2(got, block.reference(flat, kept=rows >= 0)), 1e-5)
        # Hugging Face's MixtralSparseMoeBlock layout: gate, experts[i].w1 / w2 / w3.
        hf = nn.Module()
        hf.gate, hf.top_k = nn.Linear(24, 4, bias=False), 2
        hf.experts = nn.ModuleList()
        for _ in range(4):
            expert = nn.Module()
            expert.w1, expert.w3, expert.w2 = nn.Linear(24, 40, bias=False), nn.Linear(24, 40, bias=False), \
                nn.Linear(40, 24, bias=False)
            hf.experts.append(expert)
        swapped = ktune.nn.MixtureOfExperts.from_mixtral(hf)
        probabilities = torch.softmax(hf.gate(flat), -1)
        top, chosen = torch.topk(probabilities, 2, -1)
        top = top / top.sum(-1, keepdim=True)
        want = sum(top[:, k, None] * torch.stack([hf.experts[e].w2(F.silu(hf.experts[e].w1(t)) * hf.experts[e].w3(t))
                                                  for t, e in zip(flat, chosen[:, k].tolist())]) for k in range(2))
        self.assertLess(relative_l2(swapped(flat), want), 1e-5)
        # Inference stacks w1 and w3 once, and again only after a weight changes.
        block.capacity_percent = 0
        with torch.no_grad():
            block(flat)
            stacked = block._w13[1]
            block(flat)
            self.assertIs(block._w13[1], stacked)
            before = block.reference(flat)
            block.w3.mul_(0.5)
            self.assertGreater(relative_l2(block.reference(flat), before), 1e-2)  # the change shows
            self.assertLess(relative_l2(block(flat), block.reference(flat)), 1e-5)
            self.assertIsNot(block._w13[1], stacked)
        # Gradients through the recomputed backward of each op.
        x = torch.randn(20, 24, requires_grad=True)
        block(x).pow(2).sum().backward()
        got = [x.grad.clone()] + [p.grad.clone() for p in block.parameters()]
        x.grad = None
        block.zero_grad()
        block.reference(x).pow(2).sum().backward()
        for g, t in zip(got, [x] + list(block.parameters())):
            self.assertLess(relative_l2(g, t.grad), 1e-5)

    def test_settings_the_kernels_lack_fall_back_with_a_warning(self):
        norm, fused = nn.LayerNorm(16, eps=1e-6), ktune.nn.LayerNorm(16, eps=1e-6)
        x = torch.randn(4, 16)
        with self.assertWarnsRegex(UserWarning, "eps=1e-06"):
            out = fused(x)
        self.assertLess(relative_l2(out, norm(x)), 1e-6)
        attn = ktune.nn.FusedAttention(16, 2, batch_first=True)
        with self.assertWarnsRegex(UserWarning, "need_weights=True"):
            _, weights = attn(x[None], x[None], x[None])
        self.assertEqual(tuple(weights.shape), (1, 4, 4))


class Tuning(unittest.TestCase):
    SHAPE = {"rows": 48, "cols": 160}

    def run_python(self, code, env):
        result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600,
                                env={**os.environ, **env, "PYTHONPATH": os.path.join(ARGS.source_dir, "python")})
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        return json.loads(result.stdout.strip().splitlines()[-1])

    def test_tune_then_a_later_process_runs_the_tuned_config(self):
        with tempfile.TemporaryDirectory() as scratch:
            db = os.path.join(scratch, "tuned.db")
            choices = ktune.tune(family="rmsnorm", dims=self.SHAPE, precision="fp32", backend="cpu", db=db, seconds=2)
            self.assertEqual(choices[0]["source"], "given", choices)
            ktune.use_database(None)
            later = ("import json, torch, ktune\n"
                     "x = torch.randn(48, 160); w = torch.rand(160) + 0.5\n"
                     "y = ktune.rms_norm(x, w)\n"
                     "assert float((y - ktune.formulas.REFERENCES['rms_norm'](x, w)).abs().max()) < 1e-4\n"
                     "print(json.dumps(ktune.shared_context('cpu').choose('rmsnorm', {'rows': 48, 'cols': 160}, "
                     "'fp32')))\n")
            chosen = self.run_python(later, {"KTUNE_DB": db, "KTUNE_BIN": ARGS.ktune})
            self.assertEqual((chosen["source"], chosen["config"]), ("given", choices[0]["config"]))
            # Without the database the same process runs the library's own choice.
            default = self.run_python(later, {"KTUNE_BIN": ARGS.ktune})
            self.assertNotEqual(default["source"], "given")

    def test_tune_on_first_use(self):
        with tempfile.TemporaryDirectory() as scratch:
            db = os.path.join(scratch, "first-use.db")
            code = ("import json, torch, ktune\n"
                    "with ktune.recording() as calls:\n"
                    "    ktune.softmax(torch.randn(40, 96))\n"
                    "print(json.dumps({'calls': calls, 'choice': ktune.shared_context('cpu').choose('softmax', "
                    "{'rows': 40, 'cols': 96}, 'fp32')}))\n")
            first = self.run_python(code, {"KTUNE_DB": db, "KTUNE_AUTOTUNE": "1", "KTUNE_AUTOTUNE_SECONDS": "2",
                                           "KTUNE_BIN": ARGS.ktune})
            self.assertEqual(first["calls"], [{"family": "softmax", "backend": "cpu", "device": 0,
                                               "dims": {"rows": 40, "cols": 96}, "precision": "fp32"}])
            self.assertEqual(first["choice"]["source"], "given")
            self.assertTrue(os.path.exists(db))
            # The next process finds the shape tuned: its ktune refuses to tune (export still works).
            refusing = os.path.join(scratch, "ktune-no-tune")
            with open(refusing, "w") as f:
                f.write(f'#!/bin/sh\n[ "$1" = tune ] && {{ echo "tuned again" >&2; exit 9; }}\nexec {ARGS.ktune} "$@"\n')
            os.chmod(refusing, 0o755)
            second = self.run_python(code, {"KTUNE_DB": db, "KTUNE_AUTOTUNE": "1", "KTUNE_BIN": refusing})
            self.assertEqual(second["choice"]["config"], first["choice"]["config"])

    def test_refine_keeps_the_candidate_fastest_in_place(self):
        dims = {"m": 96, "n": 80, "k": 64}
        with tempfile.TemporaryDirectory() as scratch:
            db = os.path.join(scratch, "refine.db")
            with self.assertRaises(ktune.BadArgument):
                ktune.refine(lambda: None, db=db)  # no database there yet
            tuned = ktune.tune(family="gemm", dims=dims, precision="fp32", backend="cpu", db=db, seconds=2)[0]
            ktune.use_database(None)
            x, w = torch.randn(96, 64), torch.randn(80, 64)
            with self.assertRaises(ktune.BadArgument):
                ktune.refine(lambda: ktune.linear(x, w), db=db, top=0)
            self.assertEqual(ktune.refine(lambda: ktune.softmax(torch.randn(3, 5)), db=db), [])  # no gemm call
            choices = os.path.join(scratch, "choices.json")
            refined = ktune.refine(lambda: ktune.linear(x, w), db=db, top=3, samples=3, save=choices)
            # A later process, with the database in use too, runs the saved choice: here the
            # slowest candidate in place, written over the kept one.
            with open(choices) as f:
                saved = json.load(f)
            self.assertEqual([c["config"] for c in saved["choices"]], [refined[0]["chosen"]])
            saved["choices"][0]["config"] = refined[0]["candidates"][-1]["config"]
            with open(choices, "w") as f:
                json.dump(saved, f)
            later = ("import json, torch, ktune\n"
                     f"ktune.use_choices({choices!r})\n"
                     "x, w = torch.randn(96, 64), torch.randn(80, 64)\n"
                     "assert float((ktune.linear(x, w) - x @ w.T).abs().max()) < 1e-3\n"
                     "print(json.dumps(ktune.shared_context('cpu').choose('gemm', {'m': 96, 'n': 80, 'k': 64}, 'fp32')))\n")
            chosen = self.run_python(later, {"KTUNE_DB": db, "KTUNE_BIN": ARGS.ktune})
            self.assertEqual(chosen["config"], refined[0]["candidates"][-1]["config"])
            with open(choices, "w") as f:
                f.write("{}")
            with self.assertRaisesRegex(ktune.BadArgument, "not a file of choices"):
                ktune.use_choices(choices)
        self.assertEqual(len(refined), 1, refined)
        call, candidates = refined[0]["call"], refined[0]["candidates"]
        self.assertEqual((call["family"], call["dims"]["m"], call["dims"]["epilogue"]), ("gemm", 96, 0))
        self.assertGreaterEqual(len(candidates), 2)
        self.assertEqual(candidates[0]["config"], tuned["config"])  # fastest alone first
        fastest_in_place = min(candidates, key=lambda c: c["median_s"])["config"]
        self.assertEqual(refined[0]["chosen"], fastest_in_place)
        choice = ktune.shared_context("cpu").choose("gemm", dims, "fp32")
        self.assertEqual((choice["source"], choice["config"]), ("given", fastest_in_place))
        self.assertLess(float((ktune.linear(x, w) - x @ w.T).abs().max()), 1e-3)

    def test_a_composed_call_tunes_and_takes_its_stages_configs(self):
        # attention_block on first use: each of its stages is tuned as its own call, and the composed
        # call runs the stages' tuned configs (what choose() lists for it).
        with tempfile.TemporaryDirectory() as scratch:
            db = os.path.join(scratch, "block.db")
            code = ("import json, torch, ktune\n"
                    "dims = {'batch': 1, 'seq': 9, 'hidden': 24, 'heads': 2, 'kv_heads': 1, 'head_dim': 8,"
                    " 'causal': 1, 'rope': 0, 'residual': 1}\n"
                    "stages = ktune._native.stages('attention_block', dims, 'fp32')\n"
                    "x = torch.randn(1, 9, 24); wqkv = torch.randn(32, 24) * 0.2; wo = torch.randn(24, 16) * 0.2\n"
                    "y = ktune.attention_block(x, wqkv, None, wo, None, 2, 1, True, None, None, True)\n"
                    "want = ktune.formulas.REFERENCES['attention_block'](x, wqkv, None, wo, None, 2, 1, True, None,"
                    " None, True)\n"
                    "assert float((y - want).abs().max()) < 1e-4\n"
                    "context = ktune.shared_context('cpu')\n"
                    "print(json.dumps({'stages': stages, 'block': context.choose('attention_block', dims, 'fp32'),"
                    " 'each': [context.choose(s['family'], s['dims'], 'fp32') for s in stages]}))\n")
            run = self.run_python(code, {"KTUNE_DB": db, "KTUNE_AUTOTUNE": "1", "KTUNE_AUTOTUNE_SECONDS": "1",
                                         "KTUNE_BIN": ARGS.ktune})
            self.assertEqual([s["family"] for s in run["stages"]],
                             ["gemm", "split_heads", "flash_attention", "merge_heads", "gemm"])
            self.assertEqual(run["stages"][2]["dims"]["seq_q"], 9)
            self.assertEqual([c["source"] for c in run["each"]], ["given"] * 5)
            self.assertEqual(run["block"]["source"], "composed")
            self.assertEqual(run["block"]["description"].count("(given)"), 5, run["block"]["description"])


class PipInstall(unittest.TestCase):
    def test_pip_install_into_a_virtual_environment(self):
        with tempfile.TemporaryDirectory() as scratch:
            # pip builds in the folder it is given: a copy, so the source tree stays clean.
            package = shutil.copytree(os.path.join(ARGS.source_dir, "python"), os.path.join(scratch, "package"))
            venv = os.path.join(scratch, "venv")
            subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", venv], check=True)
            python = os.path.join(venv, "bin", "python")
            env = {k: v for k, v in os.environ.items() if k not in ("KTUNE_LIBRARY", "PYTHONPATH")}
            result = subprocess.run([python, "-m", "pip", "install", "--no-build-isolation", "--no-deps", "--no-index",
                                     package], capture_output=True, text=True,
                                    env={**env, "KTUNE_LIBRARY": ARGS.library}, timeout=600)
            self.assertEqual(result.returncode, 0, result.stdout[-3000:] + result.stderr[-3000:])
            check = ("import json, torch, ktune\n"
                     "y = ktune.softmax(torch.randn(3, 5))\n"
                     "print(json.dumps({'path': ktune.library_path(), 'sum': float(y.sum())}))\n")
            result = subprocess.run([python, "-c", check], capture_output=True, text=True, env=env, cwd=scratch,
                                    timeout=300)
            self.assertEqual(result.returncode, 0, result.stderr)
            out = json.loads(result.stdout)
            self.assertTrue(out["path"].startswith(venv), out)
            self.assertAlmostEqual(out["sum"], 3.0, places=5)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--ktune", required=True)
    parser.add_argument("--library", required=True)
    parser.add_argument("--source-dir", required=True)
    ARGS, rest = parser.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)
