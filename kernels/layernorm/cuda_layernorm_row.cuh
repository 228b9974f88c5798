// The part of LayerNorm that layernorm.cu, residual_layernorm.cu and instance_norm.cu share: from
// a stored row and the sum of its elements to the normalised, scaled and shifted row in memory.
// LayerNorm scales and shifts per column (gamma[c], beta[c]); InstanceNorm per row (its channel's),
// so the affine is a functor.
#pragma once

#include "kernels/common/cuda_rows.cuh"

namespace kt {

constexpr float kLayerNormEpsilon = 1e-5f;

// `values` holds this thread's elements of the row (absent ones 0), `sum` this thread's share of
// their sum. Every thread of the block calls it (it reduces); only active rows are written.
// affine(i, item, inv_std) turns item i's centred values into outputs in place.
template <typename Affine>
__device__ __forceinline__ void normalise_row(rows::RowValues& values, float sum, rows::Reducer& reduce, bool active,
                                              Affine affine, rows::T* __restrict__ out) {
  using namespace rows;
  const float mean = reduce.sum(sum) / float(rows::row_cols());
  // Centre the row in place; elements past the end stay out of the variance.
  float sum_sq = 0.f;
#pragma unroll
  for (int i = 0; i < kItems; ++i) {
#pragma unroll
    for (int v = 0; v < kVec; ++v) {
      const float d = element_present(i, v) ? values.at(i, v) - mean : 0.f;
      values.at(i, v) = d;
      sum_sq += d * d;
    }
  }
  const float inv_std = rsqrtf(reduce.sum(sum_sq) / float(rows::row_cols()) + kLayerNormEpsilon);
  if (!active) return;
#pragma unroll
  for (int i = 0; i < kItems; ++i) {
    if (!item_present(i)) continue;
    float item[kVec];
    get_item(values, i, item);
    affine(i, item, inv_std);
    store_item(out, i, item);
  }
}

// LayerNorm's affine: per column.
__device__ __forceinline__ void layernorm_row(rows::RowValues& values, float sum, rows::Reducer& reduce,
                                              bool active, const rows::T* __restrict__ gamma,
                                              const rows::T* __restrict__ beta, rows::T* __restrict__ out) {
  using namespace rows;
  const auto per_column = [gamma, beta](int i, float (&item)[kVec], float inv_std) {
    float g[kVec], b[kVec];
    load_item<kCacheDefault>(gamma, i, g, 0.f);
    load_item<kCacheDefault>(beta, i, b, 0.f);
#pragma unroll
    for (int v = 0; v < kVec; ++v) item[v] = item[v] * inv_std * g[v] + b[v];
  };
  normalise_row(values, sum, reduce, active, per_column, out);
}

}  // namespace kt
