"""The tuned tables ktune's PyTorch modules need on this card, for `ci/gpu-check torch_tune
[SECONDS]`: each module of ci/gpu/bench_torch_modules.py and its decoder blocks run once under
ktune.recording() (with KTUNE_TORCH_TUNE_BLOCKS=1, also ci/gpu/bench_attention_block.py's
blocks; with KTUNE_TORCH_TUNE_MODULES=0, the decoder block alone); every recorded call (family, dims, precision) is tuned with `ktune tune` for at most
SECONDS into DB (a composed call, attention_block, as its stages); then `ktune export -b cuda` of
the recorded families writes OUT_DIR (cuda/<family>.json tables and headers). Those tables, copied into the repository's tuned/ and compiled
into the library (ci/build-gpu-bundle), are what a later `ci/gpu-check torch` runs without
compiling anything (the library would otherwise compile each tuned config on first use, with
KTUNE_DB naming DB).
A call of a compute-bound family (`ktune list`'s memory_bound false: the GEMMs and attention,
where the tile matters most and a config takes longest to time) gets KTUNE_TORCH_TUNE_COMPUTE_FACTOR
times SECONDS (default 2), so that ktune.refine has good candidates to choose among in place.
Usage: python3 -m ci.gpu.tune_torch_modules SECONDS DB OUT_DIR [--quick]
Prints one JSON object: {"calls": [...], "failed": [...], "export_exit": N}."""
import json
import os
import subprocess
import sys

import torch

import ktune
from .bench_torch_modules import DTYPE, DecoderWeights, ktune_block, ktune_llama_block, module_cases


def recorded_calls(quick):
    """The library calls the modules and the decoder block make, each (family, dims, precision) once."""
    with ktune.recording() as calls, torch.no_grad():
        if os.environ.get("KTUNE_TORCH_TUNE_MODULES", "1") == "1":
            for _, _, ktune_fn in module_cases(2048 if quick else 8192):
                ktune_fn()
        weights = DecoderWeights(batch=2 if quick else 8)
        x = torch.randn(weights.batch, weights.seq, 4096, device="cuda", dtype=DTYPE)
        ktune_block(x, weights)
        ktune_llama_block(x, weights)
        if os.environ.get("KTUNE_TORCH_TUNE_BLOCKS") == "1":  # the attention_block phase's calls too
            from .bench_attention_block import SHAPES, gqa_case, mha_case, split
            for shape in os.environ.get("KTUNE_BLOCK_SHAPES", SHAPES).split():
                tokens, hidden = (int(v) for v in shape.split("x"))
                for make in (mha_case, gqa_case):
                    make(*split(tokens), hidden)[1]()
        torch.cuda.synchronize()
    return calls


def memory_bound_families():
    """The families `ktune list` says are memory-bound."""
    listed = subprocess.run([os.environ.get("KTUNE_BIN", "ktune"), "list", "--json"], capture_output=True, text=True,
                            check=True)
    return {k["kernel"] for k in json.loads(listed.stdout)["kernels"] if k["memory_bound"]}


def main(argv):
    seconds, db, out = float(argv[0]), os.path.abspath(argv[1]), os.path.abspath(argv[2])
    calls = recorded_calls("--quick" in argv)
    memory_bound = memory_bound_families()
    compute_factor = float(os.environ.get("KTUNE_TORCH_TUNE_COMPUTE_FACTOR", "2"))
    failed = []
    for call in calls:
        budget = seconds if call["family"] in memory_bound else seconds * compute_factor
        print(f"tune {call['family']} {call['dims']} {call['precision']} ({budget:g} s)", file=sys.stderr, flush=True)
        try:
            ktune.tune([call], db=db, seconds=budget)
        except ktune.KtuneError as e:  # a call no config of ktune runs: recorded, the others go on
            failed.append({"call": call, "error": str(e)[:300]})
    families = sorted({call["family"] for call in calls})
    export = [os.environ.get("KTUNE_BIN", "ktune"), "export", "-b", "cuda", "--db", db, "-o", out]
    for family in families:
        export += ["-k", family]
    exported = subprocess.run(export, stdout=sys.stderr)
    print(json.dumps({"calls": calls, "failed": failed, "export_exit": exported.returncode}, indent=1))
    return 1 if failed or exported.returncode else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
