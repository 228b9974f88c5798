"""Markdown table of ktune's tuned GEMM against cuBLASLt measured in the same run.

Usage: python3 -m ci.gpu.table_gemm BASELINE_JSON TUNE_JSON...
BASELINE_JSON comes from ci/gpu/baseline_gemm.py; each TUNE_JSON is `ktune tune --json` of one
gemm problem. Rows: shape and precision, ktune's best TFLOP/s and config, the space default's
TFLOP/s, cuBLASLt's and cuBLAS's TFLOP/s, and ktune as % of each; then the geometric means per
precision.
"""
import json
import math
import sys

from .ktune import tune_result


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    baseline = json.load(open(argv[0]))
    blas = {(r["m"], r["n"], r["k"], r["precision"], r.get("library", "cublaslt")): r for r in baseline["results"]}
    rows, ratios, ratios_cublas = [], {}, {}
    for path in argv[1:]:
        try:
            tune = tune_result(json.load(open(path)))
        except Exception as e:
            rows.append(f"| {path} | no result ({type(e).__name__}) | | | | |")
            continue
        p = tune["problem"]
        key = (p["m"], p["n"], p["k"], p["precision"])
        best, default = tune.get("best"), tune.get("default")
        ours = best["flops_per_second"] / 1e12 if best else None
        theirs = blas.get(key + ("cublaslt",), {}).get("tflops")
        cublas = blas.get(key + ("cublas",), {}).get("tflops")
        ratio = ours / theirs if ours and theirs else None
        ratio_cublas = ours / cublas if ours and cublas else None
        if ratio:
            ratios.setdefault(p["precision"], []).append(ratio)
        if ratio_cublas:
            ratios_cublas.setdefault(p["precision"], []).append(ratio_cublas)
        config = best["config"] if best else {}
        shown = " ".join(f"{k}={config[k]}" for k in ("block_m", "block_n", "stages", "consumers", "group_m", "persistent", "split_k", "cluster_m") if k in config)
        rows.append("| {}x{}x{} {} | {} | {} | {} | {} | {} | {} | {} |".format(
            p["m"], p["n"], p["k"], p["precision"],
            f"{ours:.0f}" if ours else "-", shown or "-",
            f"{default['flops_per_second'] / 1e12:.0f}" if default else "-",
            f"{theirs:.0f}" if theirs else "-", f"{100 * ratio:.1f}%" if ratio else "-",
            f"{cublas:.0f}" if cublas else "-", f"{100 * ratio_cublas:.1f}%" if ratio_cublas else "-"))
    print(f"Device: {baseline['device']}; baselines: PyTorch {baseline['torch']} (matmul on cuBLASLt and on cuBLAS; "
          "fp8 through torch._scaled_mm)\n")
    print("| m x n x k precision | ktune TFLOP/s | best config | default TFLOP/s | cuBLASLt TFLOP/s | ktune / cuBLASLt "
          "| cuBLAS TFLOP/s | ktune / cuBLAS |")
    print("|---|---:|---|---:|---:|---:|---:|---:|")
    print("\n".join(rows))
    for precision, values in sorted(ratios.items()):
        geomean = math.exp(sum(math.log(v) for v in values) / len(values))
        print(f"\nGeometric mean of ktune / cuBLASLt, {precision}: {100 * geomean:.1f}% over {len(values)} shapes")
    for precision, values in sorted(ratios_cublas.items()):
        geomean = math.exp(sum(math.log(v) for v in values) / len(values))
        print(f"\nGeometric mean of ktune / cuBLAS, {precision}: {100 * geomean:.1f}% over {len(values)} shapes")


if __name__ == "__main__":
    main()
