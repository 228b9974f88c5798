"""Markdown table of ktune's tuned flash attention against PyTorch SDPA on cuDNN and on
FlashAttention 2, measured in the same run.

Usage: python3 -m ci.gpu.table_attention BASELINE_JSON TUNE_JSON...
BASELINE_JSON comes from ci/gpu/baseline_attention.py; each TUNE_JSON is `ktune tune --json` of one
flash_attention problem (seq_q == seq_kv). Rows: shape and precision, ktune's best TFLOP/s and
config, the space default's TFLOP/s, cuDNN's and flash's TFLOP/s, and ktune as % of each; then
the geometric means and the count of shapes where ktune beats the flash backend.
"""
import json
import math
import sys

from .ktune import tune_result


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values))


def kernel_of(path):
    """The family a tune JSON measured ("" when it cannot be read)."""
    try:
        return str(tune_result(json.load(open(path))).get("kernel", ""))
    except Exception:
        return ""


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    baseline = json.load(open(argv[0]))
    sdpa = {(r["batch"], r["heads"], r["seq"], r["head_dim"], r["causal"], r["precision"], r["library"]): r
            for r in baseline["results"]}
    rows, vs_cudnn, vs_flash = [], [], []
    for path in argv[1:]:
        try:
            tune = tune_result(json.load(open(path)))
        except Exception as e:
            rows.append(f"| {path} | no result ({type(e).__name__}) | | | | | | |")
            continue
        p = tune["problem"]
        key = (p["batch"], p["heads"], p["seq_q"], p["head_dim"], p["causal"], p["precision"])
        best, default = tune.get("best"), tune.get("default")
        ours = best["flops_per_second"] / 1e12 if best else None
        cudnn = sdpa.get(key + ("cudnn",), {}).get("tflops")
        flash = sdpa.get(key + ("flash",), {}).get("tflops")
        if ours and cudnn:
            vs_cudnn.append(ours / cudnn)
        if ours and flash:
            vs_flash.append(ours / flash)
        config = best["config"] if best else {}
        # Each path's own parameters (the constraints pin the other path's to one value); a space
        # without paths (flash_attention_backward) shows all of its own.
        keys = (("path", "block_q", "block_kv", "stages") + (
            ("consumers", "blocks_per_sm") if config.get("path") == "wgmma" else ("warps",))) if "path" in config \
            else tuple(config)
        shown = " ".join(f"{k}={config[k]}" for k in keys if k in config)
        rows.append("| {}x{} h{} d{}{} {} | {} | {} | {} | {} | {} | {} | {} |".format(
            p["batch"], p["seq_q"], p["heads"], p["head_dim"], " causal" if p["causal"] else "", p["precision"],
            f"{ours:.0f}" if ours else "-", shown or "-",
            f"{default['flops_per_second'] / 1e12:.0f}" if default else "-",
            f"{cudnn:.0f}" if cudnn else "-", f"{100 * ours / cudnn:.1f}%" if ours and cudnn else "-",
            f"{flash:.0f}" if flash else "-", f"{100 * ours / flash:.1f}%" if ours and flash else "-"))
    which = "backward pass" if any(kernel_of(path).endswith("backward") for path in argv[1:]) else "forward pass"
    print(f"Device: {baseline['device']}; the {which}; baselines: PyTorch {baseline['torch']} "
          "scaled_dot_product_attention on cuDNN and on FlashAttention 2\n")
    print("| batch x seq, heads, head_dim | ktune TFLOP/s | best config | default TFLOP/s | cuDNN TFLOP/s "
          "| ktune / cuDNN | flash TFLOP/s | ktune / flash |")
    print("|---|---:|---|---:|---:|---:|---:|---:|")
    print("\n".join(rows))
    if vs_cudnn:
        print(f"\nGeometric mean of ktune / cuDNN: {100 * geomean(vs_cudnn):.1f}% over {len(vs_cudnn)} shapes")
    if vs_flash:
        wins = sum(r > 1 for r in vs_flash)
        print(f"\nGeometric mean of ktune / flash: {100 * geomean(vs_flash):.1f}% over {len(vs_flash)} shapes; "
              f"ktune faster on {wins} of {len(vs_flash)}")


if __name__ == "__main__":
    main()
