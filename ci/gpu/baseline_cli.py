"""The command line and the output of the compute-bound baselines (baseline_gemm,
baseline_attention): `--shapes S [S ...] --precisions P [P ...]`, each shape comma-separated
whole numbers; one JSON object {"device", "torch", "results"} on stdout."""
import argparse
import json

import torch


def parse_args():
    """The shapes, each a tuple of its numbers, and the precisions (default bf16)."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--shapes", nargs="+", required=True)
    parser.add_argument("--precisions", nargs="+", default=["bf16"])
    args = parser.parse_args()
    return [tuple(int(x) for x in shape.split(",")) for shape in args.shapes], args.precisions


def print_results(results):
    print(json.dumps({"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "results": results}, indent=1))
