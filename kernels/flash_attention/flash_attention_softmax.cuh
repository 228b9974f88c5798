// The online softmax of flash attention, shared by the mma.sync and wgmma paths. Both hold one
// m16 row tile of scores and outputs per thread in the same layout (mma.sync's m16n8 C fragment,
// repeated along n; wgmma's m64nN accumulator per warp): for each 8-column chunk c, elements
// 4c + 0 and 4c + 1 are row `base`, columns 8c + 2(lane % 4) and the next; 4c + 2 and 4c + 3
// are row base + 8. Scores are BKV / 2 floats, outputs D / 2.
#pragma once

#include "kernels/common/cuda_mma.cuh"

namespace kt::attention {

// +inf (NVRTC has no <cmath> INFINITY).
__device__ __forceinline__ float infinity() { return __int_as_float(0x7f800000); }

__device__ __forceinline__ float quad_max(float x) {
  x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 1));
  return fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 2));
}

// The rows a consumer thread owns and what masking them needs.
struct Rows {
  long long base;      // rows base and base + 8
  long long unmasked;  // keys the block's first row sees: blocks of keys before it need no mask
  float scale_log2;
  Lengths len;
};

// Masks block j of scores, turns them into probabilities against each row's running maximum
// and updates the running sums; `rescale` is what O must be multiplied by before this block's
// P·V is added (0 for rows that saw no key before).
__device__ __forceinline__ void softmax_update(float (&score)[BKV / 2], int j, const Rows& rows, float (&row_max)[2],
                                               float (&row_sum)[2], float (&rescale)[2]) {
  const int lane = threadIdx.x % 32;
  const long long kv0 = static_cast<long long>(j) * BKV;
  const bool masked = kv0 + BKV > rows.unmasked;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const long long visible = masked ? rows.len.keys_visible(rows.base + h * 8) : rows.len.seq_kv;
    float block_max = -infinity();
#pragma unroll
    for (int n = 0; n < BKV / 8; ++n)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        float& s = score[n * 4 + h * 2 + e];
        s = masked && kv0 + n * 8 + lane % 4 * 2 + e >= visible ? -infinity() : s * rows.scale_log2;
        block_max = fmaxf(block_max, s);
      }
    const float new_max = fmaxf(row_max[h], quad_max(block_max));
    // A row that has seen no key yet keeps max -inf: exponents are taken from 0 then.
    const float base = new_max == -infinity() ? 0.f : new_max;
    rescale[h] = kt::exp2_flush_subnormal(row_max[h] - base);
    row_max[h] = new_max;
    float sum = 0.f;
#pragma unroll
    for (int n = 0; n < BKV / 8; ++n)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        float& s = score[n * 4 + h * 2 + e];
        s = kt::exp2_flush_subnormal(s - base);
        sum += s;
      }
    row_sum[h] = row_sum[h] * rescale[h] + sum;
  }
}

__device__ __forceinline__ void rescale_output(float (&out)[D / 2], const float (&rescale)[2]) {
#pragma unroll
  for (int n = 0; n < D / 8; ++n)
#pragma unroll
    for (int e = 0; e < 4; ++e) out[n * 4 + e] *= rescale[e / 2];
}

// Two n8 score chunks are one k16 A fragment of P·V (mma.sync m16n8k16 and wgmma's register A).
__device__ __forceinline__ void pack_probabilities(const float (&score)[BKV / 2], unsigned (&p)[BKV / 16][4]) {
#pragma unroll
  for (int kk = 0; kk < BKV / 16; ++kk)
#pragma unroll
    for (int r = 0; r < 4; ++r) p[kk][r] = kt::mma::pack_pair(score[8 * kk + 2 * r], score[8 * kk + 2 * r + 1]);
}


// O = accumulators / row sum and lse = ln(sum of e^scores) = ln 2 * (max + log2 sum) for rows
// base and base + 8 of one head (`o` and `lse` point at its first row); row sums are summed
// over the quad first (each thread summed its own columns).
__device__ __forceinline__ void store_rows(const float (&out)[D / 2], const float (&row_max)[2], const float (&row_sum)[2],
                                           long long base, T* o, float* lse, long long seq_q) {
  const int lane = threadIdx.x % 32;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const long long row = base + h * 8;
    float sum = row_sum[h];
    sum += __shfl_xor_sync(0xffffffffu, sum, 1);
    sum += __shfl_xor_sync(0xffffffffu, sum, 2);
    if (row >= seq_q) continue;
    const bool empty_row = sum == 0.f;  // the row sees no key (causal, seq_q > seq_kv; or a block mask)
    const float inverse = empty_row ? 0.f : 1.f / sum;
    T* o_row = o + row * D;
#pragma unroll
    for (int n = 0; n < D / 8; ++n) {
      kt::Packed<T, 2> pair;
      pair.elements.v[0] = kt::from_float<T>(out[n * 4 + h * 2] * inverse);
      pair.elements.v[1] = kt::from_float<T>(out[n * 4 + h * 2 + 1] * inverse);
      *reinterpret_cast<decltype(pair.raw)*>(o_row + n * 8 + lane % 4 * 2) = pair.raw;
    }
    if (lane % 4 == 0) lse[row] = empty_row ? infinity() : (row_max[h] + log2f(sum)) * 0.69314718055994531f;
  }
}

}  // namespace kt::attention
