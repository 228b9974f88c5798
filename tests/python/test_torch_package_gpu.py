"""The Python package on a CUDA GPU (skipped without one), with the PyTorch of the machine:

- every op at odd shapes on CUDA tensors in fp32, fp16 and bf16 against PyTorch's formula in
  float64 (relative L2 error under design.md's tolerance for the precision), and attention's
  backward kernel against PyTorch's autograd;
- the ops captured in a CUDA graph and replayed on new inputs, and launched on a side stream;
- torch.compile(fullgraph=True) through the registered ops (PyTorch 2.1 and later);
- a transformer block's modules swapped with its state dict, in bf16;
- a config tuned after the library was built runs in a later process: the library compiles it
  with NVRTC on first use (needs the `ktune` command: $KTUNE_BIN, else PATH).

Run as: python3 test_torch_package_gpu.py --library LIBKTUNE_KERNELS(with CUDA) --source-dir DIR
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
    global torch, nn, ktune, formulas, ops, op_cases, relative_l2
    import torch
    from torch import nn
    if not torch.cuda.is_available():
        raise unittest.SkipTest("no CUDA device")
    os.environ["KTUNE_LIBRARY"] = ARGS.library
    sys.path.insert(0, os.path.join(ARGS.source_dir, "python"))
    import ktune
    from ktune import formulas, ops
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import op_cases
    from op_cases import relative_l2


def random(*shape, **kwargs):
    return op_cases.random(*shape, device="cuda", **kwargs)


class CudaOps(unittest.TestCase):
    def test_every_op_at_odd_shapes(self):
        torch.manual_seed(11)
        for precision in ("fp32", "fp16", "bf16"):
            dtype = op_cases.DTYPES[precision]
            with self.subTest(precision=precision):
                for name, args, out_index in op_cases.cases(
                        op_cases.Sizes(large=True), lambda *shape, **kw: random(*shape, dtype=dtype, **kw),
                        lambda rows, half: torch.arange(rows, dtype=torch.float64, device="cuda")[:, None] * torch.rand(
                            half, dtype=torch.float64, device="cuda")):
                    op_cases.check(self, ktune, name, args, precision, out_index, device="cuda")


    def test_attention_backward_kernel(self):
        """The backward kernel on CUDA (ktune.flash_attention_backward); once it passes here, ops'
        KERNEL_BACKWARD_DEVICES may take "cuda"."""
        torch.manual_seed(12)
        for precision in ("fp32", "fp16", "bf16"):
            dtype = op_cases.DTYPES[precision]
            with self.subTest(precision=precision):
                op_cases.check_attention_backward(
                    self, ktune, lambda *shape, **kw: random(*shape, dtype=dtype, **kw), precision, (64, 128))


    def test_mixture_of_experts_in_bf16(self):
        torch.manual_seed(13)
        block = ktune.nn.MixtureOfExperts(256, 512, 8, top_k=2).cuda()
        exact = ktune.nn.MixtureOfExperts(256, 512, 8, top_k=2).cuda().double()
        block.to(torch.bfloat16)
        exact.load_state_dict({name: t.double() for name, t in block.state_dict().items()})
        x = random(1000, 256, dtype=torch.bfloat16)
        # The experts the kernels chose (bf16 logits), the rest of the block in float64.
        chosen = ktune.moe_routing(ops.linear(x, block.gate.weight), x, 2, 0, True)[1]
        self.assertLess(relative_l2(block(x), exact.reference(x.double(), chosen=chosen)), 2e-2)


class CudaGraphsStreamsCompile(unittest.TestCase):
    def block(self, x, w, gamma, beta, q, k, v):
        h = ktune.linear(ktune.layer_norm(x, gamma, beta), w, activation="none")
        return ktune.rms_norm(h, gamma[: h.shape[-1]]), ktune.flash_attention(q, k, v, causal=True)

    def inputs(self):
        r = lambda *shape, **kw: random(*shape, dtype=torch.bfloat16, **kw)  # noqa: E731
        return (r(64, 256), r(256, 256, low=-0.1, high=0.1), r(256, low=0.5, high=1.5), r(256),
                r(1, 8, 100, 64), r(1, 8, 100, 64), r(1, 8, 100, 64))

    def test_captured_in_a_cuda_graph_and_replayed_on_new_inputs(self):
        static = self.inputs()
        eager = self.block(*static)  # warm-up: each shape's config chosen and its module loaded
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            self.block(*static)
        torch.cuda.current_stream().wait_stream(stream)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            captured = self.block(*static)
        fresh = self.inputs()
        for buffer, value in zip(static, fresh):
            buffer.copy_(value)
        graph.replay()
        torch.cuda.synchronize()
        want = self.block(*fresh)
        for got, expected in zip(captured, want):  # split-K configs may add in another order
            self.assertLess(relative_l2(got, expected), 1e-3)
        self.assertGreater(relative_l2(captured[0], eager[0]), 1e-2)  # the replay used the new inputs

    def test_a_side_stream_orders_with_pytorchs_work(self):
        x = random(4096, 4096, dtype=torch.bfloat16)
        w = random(4096, dtype=torch.bfloat16, low=0.5, high=1.5)
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            y = ktune.rms_norm(x * 2, w)  # the multiply and the kernel both on `side`
        torch.cuda.current_stream().wait_stream(side)
        self.assertLess(relative_l2(y, formulas.REFERENCES["rms_norm"]((x * 2).double(), w.double())), 1e-2)

    def test_two_streams_each_with_its_workspace(self):
        """moe_routing's blocks take tickets from its workspace: launches of one prepared call on
        two streams at once must not share it (the library keeps one per stream)."""
        torch.manual_seed(14)
        logits, x = random(8192, 8, dtype=torch.bfloat16), random(8192, 512, dtype=torch.bfloat16)
        want = ktune.moe_routing(logits, x, 2, 125, True)
        streams = [torch.cuda.Stream() for _ in range(2)]
        for stream in streams:
            stream.wait_stream(torch.cuda.current_stream())
        outputs = []
        for _ in range(10):
            for stream in streams:
                with torch.cuda.stream(stream):
                    outputs.append(ktune.moe_routing(logits, x, 2, 125, True))
        torch.cuda.synchronize()
        for got in outputs:
            for g, w in zip(got, want):
                self.assertTrue(torch.equal(g, w))

    def test_torch_compile_through_the_ops(self):
        if not hasattr(torch, "compile") or tuple(int(p) for p in torch.__version__.split(".")[:2]) < (2, 1):
            self.skipTest(f"torch {torch.__version__}")
        static = self.inputs()
        compiled = torch.compile(self.block, fullgraph=True)
        for got, want in zip(compiled(*static), self.block(*static)):
            self.assertLess(relative_l2(got, want), 1e-3)


class CudaTuning(unittest.TestCase):
    SHAPE = {"rows": 48, "cols": 160}  # a width no binary of the library was compiled for

    def test_a_config_tuned_now_runs_in_a_later_process(self):
        ktune_bin = os.environ.get("KTUNE_BIN") or shutil.which("ktune")
        if not ktune_bin:
            self.skipTest("no ktune command (set KTUNE_BIN)")
        with tempfile.TemporaryDirectory() as scratch:
            db, cache = os.path.join(scratch, "tuned.db"), os.path.join(scratch, "cache")
            env = {**os.environ, "KTUNE_BIN": ktune_bin, "KTUNE_CACHE_DIR": cache}
            tuned = subprocess.run(
                [sys.executable, "-c",
                 "import json, ktune\n"
                 f"print(json.dumps(ktune.tune(family='rmsnorm', dims={self.SHAPE!r}, precision='bf16', "
                 f"backend='cuda', db={db!r}, seconds=3)))\n"],
                capture_output=True, text=True, timeout=600, env=env)
            self.assertEqual(tuned.returncode, 0, tuned.stdout + tuned.stderr)
            choices = json.loads(tuned.stdout.strip().splitlines()[-1])
            self.assertEqual(choices[0]["source"], "given", choices)
            # A later process, with an empty binary cache: the library compiles the tuned config.
            shutil.rmtree(cache, ignore_errors=True)
            later = ("import json, warnings, torch, ktune\n"
                     "torch.manual_seed(3)\n"
                     "x = torch.randn(48, 160, device='cuda', dtype=torch.bfloat16)\n"
                     "w = (torch.rand(160, device='cuda') + 0.5).to(torch.bfloat16)\n"
                     "with warnings.catch_warnings():\n"
                     "    warnings.simplefilter('error')\n"
                     "    y = ktune.rms_norm(x, w)\n"
                     "ref = ktune.formulas.REFERENCES['rms_norm'](x.double(), w.double())\n"
                     "error = float((y.double() - ref).norm() / ref.norm())\n"
                     "print(json.dumps({'choice': ktune.shared_context('cuda').choose('rmsnorm', "
                     f"{self.SHAPE!r}, 'bf16'), 'error': error}}))\n")
            result = subprocess.run([sys.executable, "-c", later], capture_output=True, text=True, timeout=600,
                                    env={**env, "KTUNE_DB": db})
            self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
            after = json.loads(result.stdout.strip().splitlines()[-1])
            self.assertEqual((after["choice"]["source"], after["choice"]["config"]),
                             ("given", choices[0]["config"]))
            self.assertLess(after["error"], 1e-2)
            self.assertTrue(any(name.endswith(".cubin") for name in os.listdir(cache)), os.listdir(cache))
            # With run-time compiles off, the same process warns and runs the library's own choice.
            off = subprocess.run([sys.executable, "-c", later.replace("simplefilter('error')", "simplefilter('always')")],
                                 capture_output=True, text=True, timeout=600,
                                 env={**env, "KTUNE_DB": db, "KTUNE_LIBRARY_COMPILE": "0"})
            self.assertEqual(off.returncode, 0, off.stdout + off.stderr)
            self.assertIn("KTUNE_LIBRARY_COMPILE=0", off.stderr)
            self.assertNotEqual(json.loads(off.stdout.strip().splitlines()[-1])["choice"]["source"], "given")


class CudaModules(unittest.TestCase):
    def test_state_dict_swap_in_bf16(self):
        torch.manual_seed(5)

        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.norm = nn.LayerNorm(256)
                self.attn = nn.MultiheadAttention(256, 4, batch_first=True)

            def forward(self, x):
                h = self.norm(x)
                return x + self.attn(h, h, h, need_weights=False, is_causal=False)[0]

        reference = Block().cuda().to(torch.bfloat16).eval()
        swapped = Block().cuda().to(torch.bfloat16).eval()
        swapped.load_state_dict(reference.state_dict())
        ktune.nn.replace_modules(swapped)
        self.assertIsInstance(swapped.attn, ktune.nn.FusedAttention)
        x = torch.randn(3, 77, 256, device="cuda", dtype=torch.bfloat16)
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("error")
            self.assertLess(relative_l2(swapped(x), reference.float()(x.float())), 1e-2)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--library", required=True)
    parser.add_argument("--source-dir", required=True)
    ARGS, rest = parser.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)
