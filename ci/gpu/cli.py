"""The entry point of ci/gpu-check: parses PHASE [SECONDS], prepares the machine and runs the
phase. The usage, the phases, their environment knobs and output files are those ci/gpu-check
documents; KTUNE_GPU_PLAN=1 prints what a phase would run (no GPU needed) and stops."""
import importlib
import os
import sys

from .context import Context

PHASES = ["check", "bench", "suite", "all", "dashboard", "spaces", "t1", "gemm", "attention", "scaling", "vulkan",
          "kernel_tuner", "busy", "instance_norm", "stop", "linear_residual",
          "layernorm_linear", "ffn", "torch", "torch_tune", "serving", "attention_block"]
USAGE = "usage: ci/gpu-check " + "|".join(PHASES) + " [SECONDS]"
# Each phase's module (phase_<name>.py) has run(context) and plan(context); `all` runs three.
RUNS = {"all": ["check", "bench", "suite"]}


def parse(argv):
    """(phase, SECONDS or None); exits 2 with the usage on an unknown phase or a bad SECONDS."""
    phase = argv[0] if argv else "all"
    seconds = argv[1] if len(argv) > 1 else None
    if phase not in PHASES:
        print(USAGE, file=sys.stderr)
        sys.exit(2)
    if seconds is not None:
        try:
            float(seconds)
        except ValueError:
            print(USAGE, file=sys.stderr)
            sys.exit(2)
    return phase, seconds


def main(argv):
    phase, seconds = parse(argv)
    context = Context(phase, seconds)
    modules = [importlib.import_module(f".phase_{name}", __package__) for name in RUNS.get(phase, [phase])]
    if os.environ.get("KTUNE_GPU_PLAN") == "1":
        for module in modules:
            module.plan(context)
        return 0
    context.prepare()
    context.show_device()
    print(f"CUDA kernels: {' '.join(context.kernels)}", flush=True)
    for module in modules:
        module.run(context)
    return context.status
