// The part of softmax that softmax.cu and softmax_dropout.cu share: read a row (absent elements
// as -inf, so they never win the maximum), its maximum, e = exp(x - max) in place with its sum,
// and 1 / sum. What happens to e * (1 / sum) on the way out is the caller's.
// KT_FAST_EXP (search spaces: fast_exp) picks the exponential: 0, expf (full precision, about 8
// instructions); 1, exp2 of x * log2(e) - max * log2(e): one fused multiply-add and the
// hardware's ex2 (2 ulp) with subnormal results flushed to zero (exp2f keeps them at the cost of a
// compare, a select and two multiplies per element; an e below 2^-126 is nothing next to the
// row's sum, which is at least 1), which matters once the kernel is bound by instruction issue rather
// than memory, as softmax_dropout is. Both are verified against the float64 reference.
#pragma once

#include "kernels/common/cuda_rows.cuh"

#ifndef KT_FAST_EXP
#define KT_FAST_EXP 0
#endif

namespace kt {

__device__ __forceinline__ float negative_infinity() { return __int_as_float(0xff800000); }

// Reads this thread's share of the row at `in` into `values`, leaves e = exp(x - max) there
// (0 for absent elements) and returns 1 / sum(e). Every thread of the block calls it.
// `between` runs after the loads are issued and before the first reduction waits for them:
// work that needs no row data (dropout's random bits) can hide behind the memory latency there.
template <typename Between>
__device__ __forceinline__ float softmax_row(const rows::T* __restrict__ in, rows::RowValues& values,
                                             rows::Reducer& reduce, Between between) {
  using namespace rows;
  float max = negative_infinity();
#pragma unroll
  for (int i = 0; i < kItems; ++i) {
    float item[kVec];
    load_item<kHint>(in, i, item, negative_infinity());
#pragma unroll
    for (int v = 0; v < kVec; ++v) max = fmaxf(max, item[v]);
    put_item(values, i, item);
  }
  between();
  max = reduce.max(max);
  constexpr float kLog2E = 1.4426950408889634f;
  const float max_log2 = max * kLog2E;
  float sum = 0.f;
#pragma unroll
  for (int i = 0; i < kItems; ++i) {
#pragma unroll
    for (int v = 0; v < kVec; ++v) {
#if KT_FAST_EXP
      const float e = element_present(i, v) ? exp2_flush_subnormal(fmaf(values.at(i, v), kLog2E, -max_log2)) : 0.f;
#else
      (void)max_log2;
      const float e = element_present(i, v) ? expf(values.at(i, v) - max) : 0.f;
#endif
      values.at(i, v) = e;
      sum += e;
    }
  }
  return 1.f / reduce.sum(sum);
}

__device__ __forceinline__ float softmax_row(const rows::T* __restrict__ in, rows::RowValues& values,
                                             rows::Reducer& reduce) {
  return softmax_row(in, values, reduce, [] {});
}

}  // namespace kt
