// Block-sparse attention on CUDA and HIP (kernels/block_sparse_attention/block_sparse_attention.hpp
// has the problem): flash attention's simt, mma and wgmma paths (kernels/flash_attention/), whose
// query blocks first list the mask blocks their row keeps (BlockMask in
// flash_attention_common.cuh) and visit only those blocks' keys (on the wgmma path the producer's
// TMA loads follow the list). The entry is the paths' own, with the mask after the scale and the
// mask's dims after attention's (before the wgmma path's tensor maps).
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
#elif KT_PATH == KT_PATH_wgmma
#include "kernels/flash_attention/flash_attention_softmax.cuh"
#include "kernels/flash_attention/flash_attention_wgmma.cuh"
#else
#error "unknown KT_PATH"
#endif
