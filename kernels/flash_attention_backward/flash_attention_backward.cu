// Flash attention's backward on CUDA and HIP (kernels/flash_attention_backward/
// flash_attention_backward.hpp has the problem). The "path" parameter picks the kernel:
//   simt - any NVIDIA or AMD GPU (NVRTC or hiprtc), fp32/fp16/bf16, every product on the FMA
//          units in fp32 (flash_attention_backward_simt.cuh; the HIP space's only path);
//   mma  - sm_80 and later, fp16/bf16, head_dim a multiple of 16: all five products on mma.sync
//          m16n8k16 with fp32 accumulators, tiles through cp.async stages
//          (flash_attention_backward_mma.cuh).
// Both run one launch of two kinds of blocks: blockIdx.x below the key blocks' count computes dk
// and dv of KT_BLOCK_ROWS keys of one kv head, the rest dq of KT_BLOCK_ROWS query rows of one
// head, each streaming the other operand KT_STREAM_ROWS rows at a time; deterministic (no
// atomics, no two blocks write one element), the probabilities and dS recomputed by both kinds.
// The mma path's dq=atomic instead launches key blocks only, which add dq into fp32 sums with
// atomics (flash_attention_backward_mma.cuh): two products fewer, not deterministic.
#include "kernels/flash_attention_backward/flash_attention_backward_common.cuh"

#ifndef KT_PATH
#error "KT_PATH must name the kernel path (the search space's path parameter)"
#elif KT_PATH == KT_PATH_simt
#include "kernels/flash_attention_backward/flash_attention_backward_simt.cuh"
#elif KT_PATH == KT_PATH_mma
#include "kernels/flash_attention_backward/flash_attention_backward_mma.cuh"
#else
#error "unknown KT_PATH"
#endif
