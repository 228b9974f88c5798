"""ktune's tuned kernels in Python, over the kernel library's C interface (libktune_kernels).

    import torch, ktune
    y = ktune.rms_norm(x, weight)                  # CPU tensors: ktune's CPU backend; CUDA: its GPU
    model = ktune.nn.replace_modules(model)        # LayerNorm, MultiheadAttention, ... swapped
    ktune.autotune(db="~/.cache/ktune/tuned.db")   # tune each new shape on first use, then reuse it

Ops are also registered with torch.library as torch.ops.ktune.* (they work under torch.compile
and in CUDA graphs). Without PyTorch installed, the library's own interface is still there:
ktune.Context, ktune.families(), ktune.tune().
"""
from ._native import (BackendFailure, BadArgument, Context, KtuneError, NoDevice, Unsupported, families,
                      library_path, shared_context)
from .tuning import TuneFailed, autotune, recording, refine, settings, tune, use_choices, use_database

__version__ = "0.1.0"
__all__ = ["BackendFailure", "BadArgument", "Context", "KtuneError", "NoDevice", "Unsupported", "TuneFailed",
           "families", "library_path", "shared_context", "autotune", "recording", "refine", "settings", "tune",
           "use_choices", "use_database"]

try:
    import torch  # noqa: F401
except ImportError:  # the ops and modules need PyTorch; the rest does not
    pass
else:
    from . import formulas, nn, ops
    from .ops import (attention_block, block_sparse_attention, ffn, flash_attention, flash_attention_backward, geglu, grouped_gemm,
                      instance_norm, layer_norm, layer_norm_linear, linear, merge_heads, moe_combine, moe_routing,
                      paged_attention, rms_norm, rms_norm_rope, softmax, softmax_dropout, split_heads, swiglu)
    __all__ += ["formulas", "nn", "ops", "attention_block", "block_sparse_attention", "ffn", "flash_attention", "flash_attention_backward", "geglu",
                "grouped_gemm", "instance_norm", "layer_norm", "layer_norm_linear", "linear", "merge_heads",
                "moe_combine", "moe_routing", "paged_attention", "rms_norm", "rms_norm_rope", "softmax",
                "softmax_dropout", "split_heads", "swiglu"]
