// What the flash attention kernels of every path share (kernels/flash_attention/flash_attention.cu
// lists the paths): the element type, the head size and block of keys, the lengths of a launch,
// and the blocks of keys a query block visits, all of them up to the causal bound (dense
// attention) or those its row of a block mask keeps (kernels/block_sparse_attention/).
#pragma once

#include "kernels/common/cuda_common.cuh"
#include "kernels/common/gpu_ballot.cuh"

#define KT_PATH_simt 0
#define KT_PATH_mma 1
#define KT_PATH_wgmma 2

namespace kt::attention {

using T = KT_T;
constexpr int D = KT_DIM_HEAD_DIM, BKV = KT_BLOCK_KV;  // head size; keys per pipeline stage
constexpr bool kCausal = KT_DIM_CAUSAL != 0;

// The lengths and head mapping of one launch.
struct Lengths {
  long long heads, kv_heads, seq_q, seq_kv;

  // Keys query row `i` sees, as in flash_attention::Shape::keys_visible (bottom-right causal).
  __device__ __forceinline__ long long keys_visible(long long i) const {
    if constexpr (!kCausal) return seq_kv;
    const long long last = i + seq_kv - seq_q;
    return last < 0 ? 0 : (last + 1 < seq_kv ? last + 1 : seq_kv);
  }
};

// The blocks of keys (of BKV each) a query block visits, in order: count() of them, the n-th
// being block tile(n), from key start(n). Dense attention visits every block up to the causal
// bound, in order, so its tile(n) is n and the loops compile as if written for it alone.
struct AllKeyBlocks {
  int blocks;
  __device__ __forceinline__ int count() const { return blocks; }
  __device__ __forceinline__ int tile(int n) const { return n; }
  __device__ __forceinline__ long long start(int n) const { return static_cast<long long>(n) * BKV; }
  // start(n + 1), given start(n).
  __device__ __forceinline__ long long start_after(int, long long start_n) const { return start_n + BKV; }
};
struct NoBlockMask {
  // `bound`: the blocks up to the causal bound; `list`: shared memory it does not need.
  __device__ __forceinline__ AllKeyBlocks key_blocks(long long, long long, int bound, int*) const { return {bound}; }
};

// The blocks of keys a block mask keeps: the kept mask blocks listed in shared memory, each
// `per` blocks of keys (the last one's may end at the causal bound, so `blocks` counts only those
// before it).
struct KeptKeyBlocks {
  const int* list;
  int per, blocks;
  __device__ __forceinline__ int count() const { return blocks; }
  __device__ __forceinline__ int tile(int n) const { return list[n / per] * per + n % per; }
  __device__ __forceinline__ long long start(int n) const { return static_cast<long long>(tile(n)) * BKV; }
  __device__ __forceinline__ long long start_after(int n, long long) const { return start(n + 1); }
};

// Block-sparse attention (kernels/block_sparse_attention/): blocks of `size` query rows by `size`
// keys, each kept (nonzero) or not, per head: [heads][q_blocks][kv_blocks] int32. A query block
// of the kernel lies in one row of mask blocks and a block of keys in one column (size is a
// multiple of both). Before its loop the query block lists the mask blocks its row keeps, up to
// the causal bound, in `list` (shared memory for ceil(seq_kv / size) ints): warp 0 takes 32 mask
// blocks per ballot. Blocks of keys that are off are never loaded.
struct BlockMask {
  const int* blocks;
  long long q_blocks, kv_blocks, size;

  __device__ __forceinline__ KeptKeyBlocks key_blocks(long long head, long long i0, int bound, int* list) const {
    __shared__ int listed;
    const int* kept = blocks + (head * q_blocks + i0 / size) * kv_blocks;
    const int per = static_cast<int>(size / BKV), mask_blocks = (bound + per - 1) / per;
    if (threadIdx.x < 32) {
      const int lane = static_cast<int>(threadIdx.x);
      int total = 0;
      for (int m0 = 0; m0 < mask_blocks; m0 += 32) {
        const int m = m0 + lane;
        const bool on = m < mask_blocks && kept[m] != 0;
        const unsigned bits = lanes_ballot(on);
        if (on) list[total + __popc(bits & ((1u << lane) - 1u))] = m;
        total += __popc(bits);
      }
      // The last mask block may reach past the bound: only its blocks of keys before it count.
      const bool last_kept = mask_blocks > 0 && kept[mask_blocks - 1] != 0;
      if (lane == 0) listed = total * per - (last_kept ? mask_blocks * per - bound : 0);
    }
    __syncthreads();
    return {list, per, listed};
  }
};

}  // namespace kt::attention

