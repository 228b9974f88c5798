"""ci/gpu-check attention_block: ktune's attention block (ktune.attention_block: the QKV GEMM,
split_heads with RoPE, flash attention, merge_heads and the output GEMM with the residual, one
library call) against nn.MultiheadAttention and a Llama-style SDPA block (grouped-query heads,
RoPE, causal), eager, from a CUDA graph and under torch.compile, at tokens x hidden of
KTUNE_BLOCK_SHAPES (ci/gpu/bench_attention_block.py), with the library at $KTUNE_LIBRARY (as the
torch phase). The library runs the configs compiled into it, or those of the database KTUNE_DB
names (compiled on first use): run `torch_tune` first and rebuild with its tables, or point
KTUNE_DB at its torch-tune.db, to measure tuned stages. Writes attention_block.json and
attention_block-table.md."""
from .phase_torch import bench, library


def run(context):
    print(f"== attention_block: ktune.attention_block against PyTorch's blocks with {library(context)}", flush=True)
    bench(context, "bench_attention_block", "attention_block",
          "ktune.attention_block against PyTorch's attention blocks (mha: nn.MultiheadAttention + residual; gqa: "
          "QKV, RoPE, causal SDPA over grouped-query heads, output projection + residual)")


def plan(context):
    print(f"== attention_block plan: ci/gpu/bench_attention_block.py (mha and gqa blocks at "
          f"{context.environ.get('KTUNE_BLOCK_SHAPES', 'the default shapes')}) with {library(context)}")
