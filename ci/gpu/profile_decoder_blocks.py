"""Where a decoder block's time goes, kernel by kernel, for `ci/gpu-check torch` with
KTUNE_TORCH_PROFILE=1: torch.profiler (CUDA activity) over a few eager forwards of the Llama and
QK-norm decoder blocks of ci/gpu/bench_torch_modules.py, on ktune's ops and under torch.compile.
Each kernel's device time per forward, largest first, and the sum: what a graph replay of the
block costs on the device, less the gaps between kernels. Prints markdown.
Usage: python3 -m ci.gpu.profile_decoder_blocks [--quick]"""
import sys
from collections import defaultdict

import torch
from torch.profiler import ProfilerActivity, profile

from .bench_torch_modules import (DTYPE, DecoderWeights, ktune_block, ktune_llama_block, pytorch_block,
                                  pytorch_llama_block, refine_in_place)

FORWARDS = 5


def kernel_times(fn):
    """{kernel name: device us per forward} over FORWARDS forwards after warm-up."""
    with torch.no_grad():
        for _ in range(3):
            fn()
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(FORWARDS):
                fn()
            torch.cuda.synchronize()
    times = defaultdict(float)
    for event in prof.events():
        if event.device_type == torch.autograd.DeviceType.CUDA:
            times[event.name] += event.device_time / FORWARDS  # us
    return times


def table(title, times, top=14):
    total = sum(times.values())
    rows = sorted(times.items(), key=lambda kv: -kv[1])
    lines = [f"### {title}: {total:.1f} us of kernels per forward", "", "| kernel | us | share |", "|---|---:|---:|"]
    for name, us in rows[:top]:
        lines.append(f"| {name[:110].replace('|', '/')} | {us:.1f} | {100 * us / total:.1f}% |")
    if len(rows) > top:
        rest = sum(us for _, us in rows[top:])
        lines.append(f"| ({len(rows) - top} more) | {rest:.1f} | {100 * rest / total:.1f}% |")
    return "\n".join(lines) + "\n"


def main(argv):
    p = DecoderWeights(batch=2 if "--quick" in argv else 8)
    x = torch.randn(p.batch, p.seq, 4096, device="cuda", dtype=DTYPE)
    out = [f"Decoder blocks {p.batch}x{p.seq}, hidden 4096, GQA 32/8, MLP 14336, bf16, on "
           f"{torch.cuda.get_device_name(0)} (torch {torch.__version__}): device time of each kernel per forward "
           f"(torch.profiler, {FORWARDS} eager forwards)", ""]
    for block in (ktune_llama_block, ktune_block):  # the configs the benchmark's blocks ran (KTUNE_TORCH_REFINE)
        refine_in_place(lambda: block(x, p))
    for title, fn in (("Llama block, ktune", lambda: ktune_llama_block(x, p)),
                      ("Llama block, torch.compile", torch.compile(lambda: pytorch_llama_block(x, p))),
                      ("QK-norm block, ktune", lambda: ktune_block(x, p)),
                      ("QK-norm block, torch.compile", torch.compile(lambda: pytorch_block(x, p)))):
        try:
            out.append(table(title, kernel_times(fn)))
        except Exception as e:  # noqa: BLE001 - one block's failure is reported, the others still run
            out.append(f"### {title}: failed: {type(e).__name__}: {str(e)[:300]}\n")
    print("\n".join(out))


if __name__ == "__main__":
    main(sys.argv[1:])
