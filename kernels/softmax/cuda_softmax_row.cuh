// The part of softmax that softmax.cu and softmax_dropout.cu share: read a row (absent elements
// as -inf, so they never win the maximum), its maximum, e = expf(x - max) in place with its sum,
// and 1 / sum. What happens to e * (1 / sum) on the way out is the caller's.
#pragma once

#include "kernels/common/cuda_rows.cuh"

namespace kt {

__device__ __forceinline__ float negative_infinity() { return __int_as_float(0xff800000); }

// Reads this thread's share of the row at `in` into `values`, leaves e = expf(x - max) there
// (0 for absent elements) and returns 1 / sum(e). Every thread of the block calls it.
// `between` runs after the loads are issued and before the first reduction waits for them:
// work that needs no row data (dropout's random bits) hides behind the memory latency there.
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
  float sum = 0.f;
#pragma unroll
  for (int i = 0; i < kItems; ++i) {
#pragma unroll
    for (int v = 0; v < kVec; ++v) {
      const float e = element_present(i, v) ? expf(values.at(i, v) - max) : 0.f;
      values.at(i, v) = e;
      sum += e;
    }
  }
  return 1.f / reduce.sum(sum);
}

}  // namespace kt
