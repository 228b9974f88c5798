"""Where a GEMM config's output is wrong, on the GPU: runs ktune.linear with each config given
(the library compiles it on first use) at shapes that isolate one edge each (whole tiles, a
partial k slice, partial tile columns, partial tile rows) against PyTorch's fp32 matmul of the
same bf16 inputs, and prints, for each config and shape, the share of wrong elements and which
rows of a tile (by 16-row warp band and 8-row half), which column groups of a tile and which
k slice they follow. With --residual the GEMM adds a residual in its epilogue (epilogue 1). A
diagnostic, not a test:

    PYTHONPATH=python KTUNE_LIBRARY=... python3 -m ci.gpu.gemm_error_map [--residual] [BLOCK_M,BLOCK_N,CONSUMERS,STAGES ...]
"""
import sys

import torch

import ktune
from ktune import _dispatch

BASE = {"path": "wgmma", "block_k": 64, "thread_m": 2, "thread_n": 2, "warps_m": 1, "warps_n": 1,
        "group_m": 8, "persistent": 0, "split_k": 1, "cluster_m": 1}
DEFAULT_TILES = ["192,128,3,4", "192,64,3,4", "192,192,3,4", "128,128,2,4"]


def shapes(block_m, block_n):
    whole_m, whole_n = 2 * block_m, 3 * block_n
    return [(whole_m, whole_n, 256), (whole_m, whole_n, 272), (whole_m, whole_n - 56, 256),
            (whole_m - 40, whole_n, 256), (2000, 1800, 272), (77, 200, 16)]


def describe(wrong, block_m, block_n):
    rows, cols = wrong.nonzero(as_tuple=True)
    if rows.numel() == 0:
        return "all right"
    tile_rows, tile_cols = rows % block_m, cols % block_n
    consumer_rows = {int(r) // 64 for r in tile_rows.unique()}
    bands = sorted({int(r) % 64 // 16 for r in tile_rows.unique()})
    halves = sorted({int(r) % 16 // 8 for r in tile_rows.unique()})
    col_groups = sorted({int(c) // 8 for c in tile_cols.unique()})
    tiles = sorted({(int(r) // block_m, int(c) // block_n) for r, c in zip(rows[:20000], cols[:20000])})
    more_groups, more_tiles = "..." if len(col_groups) > 12 else "", "..." if len(tiles) > 8 else ""
    return (f"{rows.numel()} wrong ({rows.numel() / wrong.numel():.1%}); m64 rows of the tile {sorted(consumer_rows)}, "
            f"warp bands {bands}, halves {halves}; column groups of 8 {col_groups[:12]}{more_groups}"
            f" ({len(col_groups)} of {block_n // 8}); tiles {tiles[:8]}{more_tiles}")


def main(argv):
    residual = "--residual" in argv
    argv = [a for a in argv if a != "--residual"]
    torch.manual_seed(0)
    device = torch.device("cuda")
    context = _dispatch.context_for(device)
    for tile in argv or DEFAULT_TILES:
        block_m, block_n, consumers, stages = (int(v) for v in tile.split(","))
        config = dict(BASE, block_m=block_m, block_n=block_n, consumers=consumers, stages=stages)
        for m, n, k in shapes(block_m, block_n):
            dims = {"m": m, "n": n, "k": k, "b_layout": 0, "epilogue": 1 if residual else 0}
            label = f"{block_m}x{block_n} c{consumers} s{stages} at {m}x{n}x{k}{' +residual' if residual else ''}"
            try:
                choice = context.use_config("gemm", dims, "bf16", config)
                if m == 2000:
                    print(f"{label}: the library runs {choice}", flush=True)
                # Small integers times powers of two: every product and sum is exact in fp32.
                x = (torch.randint(-3, 4, (m, k), device=device) / 4).to(torch.bfloat16)
                w = (torch.randint(-3, 4, (n, k), device=device) / 4).to(torch.bfloat16)
                r = (torch.randint(-3, 4, (m, n), device=device) / 4).to(torch.bfloat16) if residual else None
                got = ktune.linear(x, w, residual=r).float()
                torch.cuda.synchronize()
            except Exception as e:  # a config that does not run: say why and go on
                print(f"{label}: {type(e).__name__}: {e}", flush=True)
                continue
            expected = (x.float() @ w.float().T + (r.float() if residual else 0)).to(torch.bfloat16).float()
            wrong = ~torch.isclose(got, expected, rtol=1e-2, atol=1e-2)
            print(f"{label}: {describe(wrong.cpu(), block_m, block_n)}", flush=True)
            if wrong.any():
                r, c = (int(v[0]) for v in wrong.nonzero(as_tuple=True))
                # Which k slice the wrong value follows: the difference against partial sums.
                partial = [(x[r, :s].float() @ w[c, :s].float()).item() for s in range(0, k + 1, 64)] + \
                          [(x[r].float() @ w[c].float()).item()]
                print(f"  first wrong D[{r},{c}] = {got[r, c].item()} expected {expected[r, c].item()}; "
                      f"sums over the first 0, 64, ... k: {[round(p, 2) for p in partial]}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
