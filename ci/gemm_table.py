#!/usr/bin/env python3
"""Markdown table of ktune's tuned GEMM against cuBLASLt measured in the same run.

Usage: gemm_table.py BASELINE_JSON TUNE_JSON...
BASELINE_JSON comes from ci/gemm_baseline.py; each TUNE_JSON is `ktune tune --json` of one
gemm problem. Rows: shape and precision, ktune's best TFLOP/s and config, the space default's
TFLOP/s, cuBLASLt's TFLOP/s, and ktune as % of cuBLASLt; then the geometric mean per precision.
"""
import json
import math
import sys


def main():
    baseline = json.load(open(sys.argv[1]))
    blas = {(r["m"], r["n"], r["k"], r["precision"]): r for r in baseline["results"]}
    rows, ratios = [], {}
    for path in sys.argv[2:]:
        try:
            tune = json.load(open(path))
        except Exception as e:
            rows.append(f"| {path} | no result ({type(e).__name__}) | | | | |")
            continue
        p = tune["problem"]
        key = (p["m"], p["n"], p["k"], p["precision"])
        best, default = tune.get("best"), tune.get("default")
        ours = best["flops_per_second"] / 1e12 if best else None
        theirs = blas.get(key, {}).get("tflops")
        ratio = ours / theirs if ours and theirs else None
        if ratio:
            ratios.setdefault(p["precision"], []).append(ratio)
        config = best["config"] if best else {}
        shown = " ".join(f"{k}={config[k]}" for k in ("block_m", "block_n", "stages", "consumers", "group_m", "persistent") if k in config)
        rows.append("| {}x{}x{} {} | {} | {} | {} | {} | {} |".format(
            p["m"], p["n"], p["k"], p["precision"],
            f"{ours:.0f}" if ours else "-", shown or "-",
            f"{default['flops_per_second'] / 1e12:.0f}" if default else "-",
            f"{theirs:.0f}" if theirs else "-", f"{100 * ratio:.1f}%" if ratio else "-"))
    print(f"Device: {baseline['device']}; baseline: PyTorch {baseline['torch']} matmul on {baseline['blas']}\n")
    print("| m x n x k precision | ktune TFLOP/s | best config | default TFLOP/s | cuBLASLt TFLOP/s | ktune / cuBLASLt |")
    print("|---|---:|---|---:|---:|---:|")
    print("\n".join(rows))
    for precision, values in sorted(ratios.items()):
        geomean = math.exp(sum(math.log(v) for v in values) / len(values))
        print(f"\nGeometric mean of ktune / cuBLASLt, {precision}: {100 * geomean:.1f}% over {len(values)} shapes")


if __name__ == "__main__":
    main()
