#!/usr/bin/env python3
"""Turns ci/gpu-check's outputs into the markdown table kept in reports/benchmarks.md."""
import glob
import json
import os
import sys


def main():
    out = sys.argv[1]
    def load(name):
        try:
            with open(os.path.join(out, name)) as f:
                return json.load(f)
        except (OSError, ValueError):
            return None
    baselines = (load("baselines.json") or {}).get("results", {})
    copy = baselines.get("copy", {}).get("tb_s")
    print(f"\nsame-sized copy (16384x4096 bf16, read + write): {copy and round(copy, 3)} TB/s; "
          f"1 GiB copy: {baselines.get('copy_1GiB', {}).get('tb_s') and round(baselines['copy_1GiB']['tb_s'], 3)} TB/s\n")
    print("| kernel | tuned config | tuned | TB/s | % of copy | PyTorch eager | torch.compile | tuned / best PyTorch | default | tuned / default | configs |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for path in sorted(glob.glob(os.path.join(out, "tune-*.json"))):
        s = load(os.path.basename(path))
        if not s or not s.get("best"):
            print(f"| {os.path.basename(path)} | no result | | | | | | | | | |")
            continue
        kernel = s["kernel"]
        best, default = s["best"], s.get("default")
        tb = best["bytes_per_second"] / 1e12
        eager = baselines.get(f"{kernel}_eager", {}).get("tb_s")
        compiled = baselines.get(f"{kernel}_compile", {}).get("tb_s")
        torch_best = max([v for v in (eager, compiled) if v] or [0])
        config = " ".join(f"{k}={v}" for k, v in best["config"].items())
        fmt = lambda v: f"{v:.2f}" if v else "-"
        print(f"| {kernel} | {config} | {best['median_ns'] / 1e3:.1f} us | {tb:.2f} | "
              f"{100 * tb / copy if copy else 0:.0f}% | {fmt(eager)} | {fmt(compiled)} | "
              f"{tb / torch_best if torch_best else 0:.2f}x | "
              f"{default['bytes_per_second'] / 1e12 if default else 0:.2f} TB/s | "
              f"{default['median_ns'] / best['median_ns'] if default else 0:.2f}x | "
              f"{s['evaluated'] + s['reused']} of {s['space']['valid']} |")


if __name__ == "__main__":
    main()
