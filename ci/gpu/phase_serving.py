"""ci/gpu-check serving [SECONDS]: the serving and sparse families (paged_attention,
block_sparse_attention, grouped_gemm, moe_routing, moe_combine) on CUDA, each against the bar of
its issue, in one call on one card:
  - checks: every valid variant of each family brute-forced at its first two odd shapes
    (kernels/*/family.json), fp16 and bf16 (KTUNE_SERVING_CHECK=0 skips them);
  - tunes (at most SECONDS of evaluation each, default 15), bf16:
      paged_attention at batch 1, 16, 64 x 4k and 16k cached tokens (GQA 32/8, head_dim 128), its
        bandwidth against a copy of the same bytes (bar: 70%), and its time against PyTorch's
        gather of the pages then SDPA (and SDPA alone over K and V gathered beforehand);
      block_sparse_attention at 16k tokens, 32 heads of 128, 25% of 128-blocks kept (random and a
        sliding window), its time against ktune's dense flash_attention at that shape (bar: 35%);
      grouped_gemm over 8 and 64 experts of 128 to 4096 tokens each (n = k = 4096), its TFLOP/s
        against ktune's dense gemm of the same total (bar: 85%) and against a loop of
        torch.matmul per expert (bar: 1.5x);
      moe_routing and moe_combine at 16k tokens (Mixtral's 8 experts top-2 of 4096, and 64
        experts top-6 of 2048), their bandwidth against a copy and their time against PyTorch.
KTUNE_SERVING_FAMILIES (space-separated) limits the families; KTUNE_SERVING_PRECISION (bf16 or
fp16, default bf16) sets the precision of every tune and baseline; KTUNE_SERVING_HEAD_DIMS (e.g.
"64 128 256", default 128) the paged_attention head sizes. PyTorch's side is
ci/gpu/baseline_serving.py. Writes serving.json and serving-table.md to the output."""
import json

from . import against_pytorch, ktune
from . import families as family_descriptors
from .context import bad_setting, python_module

PRECISION = "bf16"  # the default; KTUNE_SERVING_PRECISION
FAMILIES = ["paged_attention", "block_sparse_attention", "grouped_gemm", "moe_routing", "moe_combine"]
ATTENTION = "batch=1,heads=32,seq_q=16384,seq_kv=16384,head_dim=128"
GROUPS = [(8, 128), (8, 1024), (8, 4096), (64, 128), (64, 1024)]  # (experts, tokens per expert)
MOE = [(16384, 8, 2, 4096), (16384, 64, 6, 2048)]  # (tokens, experts, top_k, hidden)


def group_sizes(m, experts):
    """kernels/grouped_gemm/family.cpp's group_sizes_of: uneven shares, group 1 empty from 3 experts."""
    shares = [0 if experts >= 3 and g == 1 else 1 + (g * 7919) % 5 for g in range(experts)]
    sizes = [m * s // sum(shares) for s in shares[:-1]]
    return sizes + [m - sum(sizes)]


def cases(families, head_dims=(128,)):
    """[(family, shape, baseline cases, reference tune or None)] of the chosen families."""
    out = []
    if "paged_attention" in families:
        for head_dim in head_dims:
            for batch in (1, 16, 64):
                for tokens in (4096, 16384):
                    out.append(("paged_attention",
                                f"batch={batch},heads=32,kv_heads=8,head_dim={head_dim},page_size=16,seq_kv={tokens}",
                                [f"gathered:{batch}:32:8:{head_dim}:16:{tokens}"], None))
    if "block_sparse_attention" in families:
        for pattern in (0, 1):
            out.append(("block_sparse_attention", f"{ATTENTION},block=128,density_percent=25,pattern={pattern}", [],
                        ("flash_attention", ATTENTION)))
    if "grouped_gemm" in families:
        for experts, per_expert in GROUPS:
            m = experts * per_expert
            out.append(("grouped_gemm", f"m={m},experts={experts},n=4096,k=4096", [f"grouped:{experts}:{m}:4096:4096"],
                        ("gemm", f"m={m},n=4096,k=4096")))
    if "moe_routing" in families:
        for tokens, experts, k, hidden in MOE:
            out.append(("moe_routing", f"tokens={tokens},experts={experts},top_k={k},hidden={hidden},"
                        "capacity_percent=125,renormalize=1", [f"route:{tokens}:{experts}:{k}:{hidden}"], None))
    if "moe_combine" in families:
        for tokens, _, k, hidden in MOE:
            out.append(("moe_combine", f"tokens={tokens},top_k={k},hidden={hidden}", [f"combine:{tokens}:{k}:{hidden}"],
                        None))
    return out


def settings(context):
    families = context.environ.get("KTUNE_SERVING_FAMILIES", " ".join(FAMILIES)).split()
    return families, context.seconds(15), context.environ.get("KTUNE_SERVING_CHECK", "1") != "0"


def serving_precision(context):
    """The precision of every tune and baseline (KTUNE_SERVING_PRECISION)."""
    chosen = context.environ.get("KTUNE_SERVING_PRECISION", PRECISION)
    if chosen not in ("bf16", "fp16"):
        bad_setting(f"KTUNE_SERVING_PRECISION: '{chosen}' is not bf16 or fp16")
    return chosen


def head_dims(context):
    text = context.environ.get("KTUNE_SERVING_HEAD_DIMS", "128")
    try:
        return tuple(int(v) for v in text.split())
    except ValueError:
        bad_setting(f"KTUNE_SERVING_HEAD_DIMS: '{text}' is not head sizes such as \"64 128 256\"")


def plan(context):
    families, seconds, check = settings(context)
    print("== serving plan")
    print(f"{'checks, ' if check else ''}tunes of {' '.join(families)} in {serving_precision(context)}, "
          f"{seconds:g} s each")
    for family, shape, baselines, reference in cases(families, head_dims(context)):
        against = f"ktune {reference[0]} {reference[1]}" if reference else "a copy"
        print(f"  {family} {shape}; PyTorch {' '.join(baselines) or '-'}; against {against}")


def tune(context, kernel, shape, seconds, precision):
    """{"ns", "bytes_per_second", "flops_per_second", "configs", "config", "exit"} of a fresh tune."""
    result_path = context.path(f"serving-{kernel}-{shape.replace('=', '_').replace(',', '_')}.json")
    # The float64 reference of the largest problems takes minutes to set up: 600 s, not the default 60.
    rc = ktune.run(context.ktune, ktune.tune_args(kernel, "cuda", shape, precision, "--time-limit", str(seconds),
                                                  "--setup-timeout", "600", "--db", context.path("serving.db"),
                                                  "--no-export", "--json"),
                   stdout=result_path, stderr=context.path("serving.err"), timeout=int(seconds) + 600, interrupt=True)
    summary = ktune.tune_result(ktune.load_json(result_path)) or {}
    best = summary.get("best") or {}
    row = {"exit": rc, "configs": summary.get("evaluated", 0) + summary.get("reused", 0),
           "outcomes": summary.get("outcomes"), "ns": best.get("median_ns"),
           "bytes_per_second": best.get("bytes_per_second"), "flops_per_second": best.get("flops_per_second"),
           "config": json.dumps(best.get("config"), separators=(",", ":")) if best else None}
    print(f"{kernel} {shape}: exit {rc}, {row['configs']} configs, best {row['ns']} ns, outcomes {row['outcomes']}",
          flush=True)
    if rc != 0 or not best:
        context.fail()
    return row


def copy_share(row, baseline):
    """The row's bandwidth as a share of a copy of the same bytes (None without both figures)."""
    copy = against_pytorch.ratio(row["copy_bytes"], baseline.get("copy_ns"))
    return against_pytorch.ratio(row.get("bytes_per_second"), copy * 1e9 if copy else None)


def verdict(family, row, reference, baseline):
    """(figure, bar, passes) of a row against its family's bar."""
    ratio = against_pytorch.ratio
    if family == "paged_attention":
        share = copy_share(row, baseline)
        gathered = ratio(min([baseline[k] for k in ("gather_sdpa_ns", "gather_sdpa_graph_ns") if k in baseline],
                             default=None), row.get("ns"))
        sdpa = ratio(baseline.get("sdpa_ns"), row.get("ns"))
        return (share, f"bandwidth >= 0.70 of a copy (PyTorch's gather + SDPA / ktune "
                f"{against_pytorch.cell(gathered, '.2f')}x, SDPA over K, V gathered before "
                f"{against_pytorch.cell(sdpa, '.2f')}x)", share is not None and share >= 0.70)
    if family == "block_sparse_attention":
        share = ratio(row.get("ns"), (reference or {}).get("ns"))
        return share, "time <= 0.35 of dense", share is not None and share <= 0.35
    if family == "grouped_gemm":
        dense = ratio(row.get("flops_per_second"), (reference or {}).get("flops_per_second"))
        loop = ratio(against_pytorch.best_pytorch({"eager_ns": baseline.get("loop_ns"),
                                                   "eager_graph_ns": baseline.get("loop_graph_ns")}), row.get("ns"))
        passes = dense is not None and loop is not None and dense >= 0.85 and loop >= 1.5
        return dense, f"TFLOP/s >= 0.85 of dense, >= 1.5x the torch loop ({against_pytorch.cell(loop, '.2f')}x)", passes
    faster = ratio(against_pytorch.best_pytorch(baseline), row.get("ns"))
    return copy_share(row, baseline), f"(no bar) bandwidth of a copy's; PyTorch / ktune {against_pytorch.cell(faster, '.2f')}x", None


def table(rows, device, precision=PRECISION):
    cell, us = against_pytorch.cell, against_pytorch.us
    lines = [f"Serving and sparse families on {device}, {precision}: median of flushed samples (GEMMs unflushed "
             "in PyTorch's loop)", "",
             "| family | shape | configs | ktune us | TB/s | TFLOP/s | against | figure | bar | met | best config |",
             "|---|---|---:|---:|---:|---:|---|---:|---|---|---|"]
    for r in rows:
        tbs = r.get("bytes_per_second") and r["bytes_per_second"] / 1e12
        tflops = r.get("flops_per_second") and r["flops_per_second"] / 1e12
        met = {True: "yes", False: "**no**", None: "-"}[r.get("passes")]
        lines.append(f"| {r['family']} | {r['shape']} | {r.get('configs', '-')} | {cell(us(r.get('ns')), '.1f')} | "
                     f"{cell(tbs, '.2f')} | {cell(tflops, '.1f')} | {r.get('against', '-')} | "
                     f"{cell(r.get('figure'), '.2f')} | {r.get('bar', '-')} | {met} | {r.get('config', '-')} |")
    return "\n".join(lines) + "\n"


def run(context):
    families, seconds, check = settings(context)
    precision = serving_precision(context)
    if check:
        for family in families:
            for shape in context.family(family).odd_shapes[:2]:
                text = family_descriptors.shape_text(shape)
                for checked in ("fp16", "bf16"):
                    against_pytorch.check_tune(context, print, family, "all", None, text, checked,
                                               "--strategy", "brute_force")
    chosen = cases(families, head_dims(context))
    # Copies of each memory-bound problem's bytes, from ktune's own count (no GPU needed for it).
    copies = {}
    for family, shape, baselines, _ in chosen:
        if family in ("paged_attention", "moe_routing", "moe_combine"):
            copies[(family, shape)] = int(ktune.problem_size(context.ktune, family, "cuda", shape, precision,
                                                              arch="sm_90a")[0])
            baselines.append(f"copy:{copies[(family, shape)]}")
    wanted = sorted({case for _, _, baselines, _ in chosen for case in baselines})
    baseline_path = context.path("serving-baselines.json")
    with open(baseline_path, "w") as out, open(context.path("serving-baselines.err"), "w") as err:
        rc = python_module("baseline_serving", precision, *wanted, stdout=out, stderr=err, timeout=900).returncode
    measured = (ktune.load_json(baseline_path) or {}).get("results") or {}
    if rc != 0:
        print(f"baselines: exit {rc}; see serving-baselines.err", flush=True)
        context.fail()
    references = {}
    rows = []
    for family, shape, baselines, reference in chosen:
        row = {"family": family, "shape": shape, **tune(context, family, shape, seconds, precision)}
        if reference and reference not in references:
            references[reference] = tune(context, *reference, seconds, precision)
        baseline = {}
        for case in baselines:
            baseline.update(measured.get(case, {}))
        row["copy_bytes"] = copies.get((family, shape))
        row["baseline"] = baseline
        row["against"] = f"ktune {reference[0]}" if reference else "a copy"
        row["reference"] = references.get(reference)
        row["figure"], row["bar"], row["passes"] = verdict(family, row, references.get(reference), baseline)
        rows.append(row)
    device = (ktune.load_json(baseline_path) or {}).get("device", "?")
    with open(context.out("serving.json"), "w") as f:
        json.dump({"device": device, "precision": precision, "seconds": seconds, "rows": rows}, f, indent=1)
    text = table(rows, device, precision)
    with open(context.out("serving-table.md"), "w") as f:
        f.write(text)
    print(text, flush=True)
