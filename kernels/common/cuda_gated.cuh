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
// With KT_RUNTIME_DIMS=1 (the variants ktune::kernels carries for widths nobody tuned) the
// width is the kernel's `cols` argument instead and KT_DIM_COLS is ignored.
//
// Defines: KT_T, KT_BLOCK_THREADS, KT_VECTOR_BYTES, KT_ITEMS, KT_DIM_COLS; optional
// KT_RUNTIME_DIMS (0), KT_STREAMING (0: plain accesses; 1: evict-first hints, as every element
// is touched once).
#pragma once

#include "kernels/common/cuda_common.cuh"

#ifndef KT_STREAMING
#define KT_STREAMING 0
#endif
#ifndef KT_RUNTIME_DIMS
#define KT_RUNTIME_DIMS 0
#endif

namespace kt {
namespace gated {

using T = KT_T;
constexpr int kVec = KT_VECTOR_BYTES / int(sizeof(T)) > 0 ? KT_VECTOR_BYTES / int(sizeof(T)) : 1;
constexpr int kItems = KT_ITEMS;
constexpr int kBlockThreads = KT_BLOCK_THREADS;
constexpr int kHint = KT_STREAMING ? kCacheStreaming : kCacheDefault;

// The output's width: compiled in (every member a constant), or the kernel's argument.
struct Width {
  long long cols;
  long long groups_per_row;  // groups of VEC outputs per row, the last one maybe partial
  // Vector accesses need every row (and the up half) to start on a vector boundary.
  bool aligned;
};
__host__ __device__ constexpr Width width_of(long long cols) { return {cols, (cols + kVec - 1) / kVec, cols % kVec == 0}; }

// Output group `group` (VEC outputs) starts at row * cols + col; its gate half is at `in`, its up
// half at in + cols.
__device__ __forceinline__ const T* group_input(const T* x, const Width& w, long long group, long long& row,
                                                long long& col) {
#if KT_RUNTIME_DIMS
  // A width known only at run time: a 32-bit division where the indices fit (a 64-bit one is
  // a long software routine, slower than the memory traffic).
  if (group < (1LL << 32) && w.groups_per_row < (1LL << 32))
    row = static_cast<unsigned>(group) / static_cast<unsigned>(w.groups_per_row);
  else
    row = group / w.groups_per_row;
#else
  row = group / w.groups_per_row;
#endif
  col = (group - row * w.groups_per_row) * kVec;
  return x + row * 2 * w.cols + col;
}

// Runs the gated activation `act` (float -> float) over the whole output.
template <typename Activation>
__device__ __forceinline__ void run(const T* __restrict__ x, T* __restrict__ out, long long rows, long long cols,
                                    Activation act) {
#if KT_RUNTIME_DIMS
  const Width w = width_of(cols);
#else
  (void)cols;
  constexpr Width w = width_of(KT_DIM_COLS);
#endif
  const long long groups = rows * w.groups_per_row;
  const long long per_pass = (long long)gridDim.x * kBlockThreads * kItems;
  for (long long base = (long long)blockIdx.x * kBlockThreads * kItems + threadIdx.x; base < groups;
       base += per_pass) {
    if (w.aligned) {
      float gate[kItems][kVec], up[kItems][kVec];
#pragma unroll
      for (int item = 0; item < kItems; ++item) {
        const long long group = base + (long long)item * kBlockThreads;
        if (group >= groups) continue;
        long long row, col;
        const T* in = group_input(x, w, group, row, col);
        load_floats<T, kVec, kHint>(in, gate[item]);
        load_floats<T, kVec, kHint>(in + w.cols, up[item]);
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
        const T* in = group_input(x, w, group, row, col);
        T* dst = out + row * w.cols + col;
        for (int v = 0; v < kVec && col + v < w.cols; ++v)
          dst[v] = from_float<T>(act(to_float(in[v])) * to_float(in[w.cols + v]));
      }
    }
  }
}

}  // namespace gated
}  // namespace kt
