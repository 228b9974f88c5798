// Flash attention forward on CUDA and HIP (kernels/flash_attention/flash_attention.hpp has the problem).
// The "path" parameter picks the kernel:
//   simt  - any NVIDIA or AMD GPU (NVRTC or hiprtc), fp32/fp16/bf16, any head_dim a multiple of
//           8: keys and values staged in shared memory as fp32, each query row owned by a group
//           of lanes that splits the head between them, every product on the FMA units
//           (kernels/flash_attention/flash_attention_simt.cuh; the only path of the HIP space);
//   mma   - sm_80 and later, fp16/bf16: cp.async stages of keys and values, ldmatrix and
//           mma.sync m16n8k16, the softmax probabilities passed from one product to the next in
//           registers (kernels/flash_attention/flash_attention_mma.cuh);
//   wgmma - Hopper (sm_90a), fp16/bf16, head_dim 64 or 128: TMA loads on mbarriers, a producer
//           warp feeding consumer warpgroups that run wgmma for both products, P·V taking P from
//           registers (kernels/flash_attention/flash_attention_wgmma.cuh).
// Every path takes q, k, v, o, lse, the softmax scale and the dims (batch, heads, kv_heads, seq_q, seq_kv, head_dim,
// causal); the wgmma path also the TMA descriptors of q, k and v. head_dim and causal are compile-time (KT_DIM_*), so a variant carries only the code
// of its own head size and mask; the lengths are read at run time. mma and wgmma are PTX, NVIDIA
// only, and so is their shared softmax (flash_attention_softmax.cuh): only they include it.
#include "kernels/flash_attention/flash_attention_common.cuh"

// Every path's entry is written in its header, with what a block-sparse entry adds
// (kernels/block_sparse_attention/block_sparse_attention.cu) left out.
#define KT_ATTENTION_ENTRY flash_attention_kernel
#define KT_ATTENTION_MASK_TENSOR
#define KT_ATTENTION_MASK_DIMS
#define KT_ATTENTION_MASK const NoBlockMask mask{}

#ifndef KT_PATH
#error "KT_PATH must name the kernel path (the search space's path parameter)"
#elif KT_PATH == KT_PATH_simt
#include "kernels/flash_attention/flash_attention_simt.cuh"
#elif KT_PATH == KT_PATH_mma
#include "kernels/flash_attention/flash_attention_softmax.cuh"
#include "kernels/flash_attention/flash_attention_mma.cuh"
#elif KT_PATH == KT_PATH_wgmma
#include "kernels/flash_attention/flash_attention_softmax.cuh"
#include "kernels/flash_attention/flash_attention_wgmma.cuh"
#else
#error "unknown KT_PATH"
#endif
