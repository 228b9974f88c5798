// What flash attention's backward paths share (kernels/flash_attention_backward/
// flash_attention_backward.cu lists them): the element type, head size, causal mask, block rows
// and the lengths of a launch.
#pragma once

#include "kernels/common/cuda_common.cuh"

#define KT_PATH_simt 0
#define KT_PATH_mma 1

namespace kt::backward {

using T = KT_T;
constexpr int D = KT_DIM_HEAD_DIM, ROWS = KT_BLOCK_ROWS, STREAM = KT_STREAM_ROWS;
constexpr bool kCausal = KT_DIM_CAUSAL != 0;
constexpr float kLog2e = 1.4426950408889634f;

__device__ __forceinline__ float infinity() { return __int_as_float(0x7f800000); }

struct Lengths {
  long long seq_q, seq_kv;
  // Keys query row i sees (flash_attention::Shape::keys_visible).
  __device__ __forceinline__ long long keys_visible(long long i) const {
    if constexpr (!kCausal) return seq_kv;
    const long long last = i + seq_kv - seq_q;
    return last < 0 ? 0 : (last + 1 < seq_kv ? last + 1 : seq_kv);
  }
  // The first query row that sees key j (bottom-right causal; 0 without the mask).
  __device__ __forceinline__ long long first_query(long long j) const {
    if constexpr (!kCausal) return 0;
    return j - (seq_kv - seq_q) > 0 ? j - (seq_kv - seq_q) : 0;
  }
};

}  // namespace kt::backward
