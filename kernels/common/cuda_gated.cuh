// The shared body of ktune's gated-activation CUDA kernels (swiglu, geglu):
// out[r, c] = act(x[r, c]) * x[r, cols + c] for an input of [rows, 2 * cols] (gate half, then up
// half) and an output of [rows, cols].
//
// Each thread handles ITEMS groups of VEC adjacent outputs per pass, BLOCK_THREADS apart, so a
// warp's accesses to one item are contiguous; blocks walk the flattened output in a grid-stride
// loop (one pass when the grid covers it, a persistent grid otherwise). All loads of a pass are
// issued before any arithmetic, so 2 * ITEMS vector loads per thread are in flight at once.
// The column count is a compile-time constant (KT_DIM_COLS): splitting a flat index into row
// and column is then a multiply, not a 64-bit division (which cost more than the memory time).
//
// Defines: KT_T, KT_BLOCK_THREADS, KT_VECTOR_BYTES, KT_ITEMS, KT_DIM_COLS; optional
// KT_STREAMING (0: plain accesses; 1: evict-first hints, as every element is touched once).
#pragma once

#include "kernels/common/cuda_common.cuh"

#ifndef KT_STREAMING
#define KT_STREAMING 0
#endif

namespace kt {
namespace gated {

using T = KT_T;
constexpr int kVec = KT_VECTOR_BYTES / int(sizeof(T)) > 0 ? KT_VECTOR_BYTES / int(sizeof(T)) : 1;
constexpr int kItems = KT_ITEMS;
constexpr int kBlockThreads = KT_BLOCK_THREADS;
constexpr long long kCols = KT_DIM_COLS;
// Vector accesses need every row (and the up half) to start on a vector boundary.
constexpr bool kAligned = kCols % kVec == 0;
constexpr long long kGroupsPerRow = (kCols + kVec - 1) / kVec;
constexpr int kHint = KT_STREAMING ? kCacheStreaming : kCacheDefault;

// Output group `group` (VEC outputs) starts at row * cols + col; its gate half is at `in`, its up
// half at in + cols.
__device__ __forceinline__ const T* group_input(const T* x, long long group, long long& row, long long& col) {
  row = group / kGroupsPerRow;
  col = (group - row * kGroupsPerRow) * kVec;
  return x + row * 2 * kCols + col;
}

// Runs the gated activation `act` (float -> float) over the whole output.
template <typename Activation>
__device__ __forceinline__ void run(const T* __restrict__ x, T* __restrict__ out, long long rows, Activation act) {
  const long long groups = rows * kGroupsPerRow;
  const long long per_pass = (long long)gridDim.x * kBlockThreads * kItems;
  for (long long base = (long long)blockIdx.x * kBlockThreads * kItems + threadIdx.x; base < groups;
       base += per_pass) {
    if constexpr (kAligned) {
      float gate[kItems][kVec], up[kItems][kVec];
#pragma unroll
      for (int item = 0; item < kItems; ++item) {
        const long long group = base + (long long)item * kBlockThreads;
        if (group >= groups) continue;
        long long row, col;
        const T* in = group_input(x, group, row, col);
        load_floats<T, kVec, kHint>(in, gate[item]);
        load_floats<T, kVec, kHint>(in + kCols, up[item]);
      }
#pragma unroll
      for (int item = 0; item < kItems; ++item) {
        const long long group = base + (long long)item * kBlockThreads;
        if (group >= groups) continue;
        float y[kVec];
#pragma unroll
        for (int v = 0; v < kVec; ++v) y[v] = act(gate[item][v]) * up[item][v];
        store_floats<T, kVec, kHint>(out + group * kVec, y);
      }
    } else {
      // Rows not on vector boundaries: element by element within each group.
#pragma unroll
      for (int item = 0; item < kItems; ++item) {
        const long long group = base + (long long)item * kBlockThreads;
        if (group >= groups) continue;
        long long row, col;
        const T* in = group_input(x, group, row, col);
        T* dst = out + row * kCols + col;
        for (int v = 0; v < kVec && col + v < kCols; ++v)
          dst[v] = from_float<T>(act(to_float(in[v])) * to_float(in[kCols + v]));
      }
    }
  }
}

}  // namespace gated
}  // namespace kt
