// Block-sparse attention on CUDA and HIP (kernels/block_sparse_attention/block_sparse_attention.hpp
// has the problem): flash attention's simt and mma paths (kernels/flash_attention/), whose query
// blocks first list the mask blocks their row keeps (BlockMask in flash_attention_common.cuh) and
// visit only those blocks' keys. The entry is the paths' own, with the mask
// after the scale and the mask's dims after attention's.
#include "kernels/flash_attention/flash_attention_common.cuh"

#define KT_ATTENTION_ENTRY block_sparse_attention_kernel
#define KT_ATTENTION_MASK_TENSOR , const int* __restrict__ block_mask
#define KT_ATTENTION_MASK_DIMS , long long block, long long, long long
#define KT_ATTENTION_MASK \
  const BlockMask mask { block_mask, (seq_q + block - 1) / block, (seq_kv + block - 1) / block, block }

#ifndef KT_PATH
#error "KT_PATH must name the kernel path (the search space's path parameter)"
#elif KT_PATH == KT_PATH_simt
#include "kernels/flash_attention/flash_attention_simt.cuh"
#elif KT_PATH == KT_PATH_mma
#include "kernels/flash_attention/flash_attention_softmax.cuh"
#include "kernels/flash_attention/flash_attention_mma.cuh"
#else
#error "block-sparse attention runs on the simt and mma paths"
#endif
