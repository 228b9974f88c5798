// The shared body of ktune's row-wise GPU kernels (CUDA and HIP) (rmsnorm, layernorm, residual_layernorm,
// softmax, softmax_dropout): which thread owns which elements of which row, where a row lives
// between its single read and its write, and the reductions over a row.
//
// Layout. A row is handled by a group of THREADS_PER_ROW threads of one block, ROWS_PER_BLOCK
// = BLOCK_THREADS / THREADS_PER_ROW rows per block. With CLUSTER_SIZE > 1 (Hopper thread-block
// clusters) a row is split into CLUSTER_SIZE slices of whole vectors, one per block of the
// cluster; the row totals are then combined through distributed shared memory. Splitting helps
// when there are too few rows to fill the GPU (decode-sized batches of wide rows), where one
// block per row leaves most SMs idle. Each thread owns ITEMS vectors of VEC elements of its
// slice: item i starts at column slice_start + (i * THREADS_PER_ROW + lane) * VEC, so a warp's
// accesses to one item are contiguous.
//
// Row storage (ROW_STORAGE). `registers`: the row stays in registers (fastest while it fits:
// ITEMS * VEC floats per thread). `shared`: it stays in dynamic shared memory instead, laid out
// [row][item][element][lane] so a warp's accesses hit 32 different banks; fewer registers per
// thread allow more resident warps, and rows too wide for registers still run.
//
// Row width. A tune compiles the width in (KT_DIM_COLS): item counts, bounds checks and row
// offsets fold into constants. With KT_RUNTIME_DIMS=1 (the variants ktune::kernels carries for
// widths nobody tuned) KT_DIM_COLS is only an upper bound that sizes the items; the width is the
// kernel's `cols` argument, which for_each_row keeps in shared memory for the block, and every
// access is bounds-checked against it.
//
// Defines read here: KT_T, KT_BLOCK_THREADS, KT_THREADS_PER_ROW, KT_VECTOR_BYTES, KT_DIM_COLS;
// optional KT_RUNTIME_DIMS (0), KT_CLUSTER_SIZE (1), KT_ROW_STORAGE (registers), KT_STREAMING
// (0: plain loads and stores; 1: evict-first hints on data read or written once, so it does not
// push the reused weights out of the caches).
#pragma once

#include "kernels/common/cuda_common.cuh"

#ifndef KT_CLUSTER_SIZE
#define KT_CLUSTER_SIZE 1
#endif
#define KT_ROW_STORAGE_registers 0
#define KT_ROW_STORAGE_shared 1
#ifndef KT_ROW_STORAGE
#define KT_ROW_STORAGE KT_ROW_STORAGE_registers
#endif
#ifndef KT_STREAMING
#define KT_STREAMING 0
#endif
#ifndef KT_RUNTIME_DIMS
#define KT_RUNTIME_DIMS 0
#endif

namespace kt {
namespace rows {

using T = KT_T;
constexpr int kBlockThreads = KT_BLOCK_THREADS;
constexpr int kThreadsPerRow = KT_THREADS_PER_ROW;
constexpr int kRowsPerBlock = KT_BLOCK_THREADS / KT_THREADS_PER_ROW;
constexpr int kCluster = KT_CLUSTER_SIZE;
constexpr int kVec = KT_VECTOR_BYTES / int(sizeof(T)) > 0 ? KT_VECTOR_BYTES / int(sizeof(T)) : 1;
// The row width compiled in: exact, or with KT_RUNTIME_DIMS the widest row the variant takes.
constexpr long long kMaxCols = KT_DIM_COLS;
// Columns per block of a cluster: whole vectors, so slices never share a vector.
__host__ __device__ constexpr long long slice_cols_of(long long cols) { return (cols + kCluster * kVec - 1) / (kCluster * kVec) * kVec; }
// Items (VEC elements, THREADS_PER_ROW lanes apart) a lane takes to cover a slice of that many columns.
__host__ __device__ constexpr int items_of(long long slice_cols) {
  return int((slice_cols + kThreadsPerRow * kVec - 1) / (kThreadsPerRow * kVec));
}
constexpr int kItems = items_of(slice_cols_of(kMaxCols));
// Every element of every item lies inside the row and its slice: no bounds checks at all.
constexpr bool kFull = !KT_RUNTIME_DIMS && kMaxCols == slice_cols_of(kMaxCols) * kCluster &&
                       slice_cols_of(kMaxCols) % (kThreadsPerRow * kVec) == 0;
constexpr bool kSharedRow = KT_ROW_STORAGE == KT_ROW_STORAGE_shared;
constexpr int kHint = KT_STREAMING ? kCacheStreaming : kCacheDefault;
// Dynamic shared memory a block needs for its rows (0 with registers); the search space's
// launch.shared_bytes must give the same number.
constexpr long long kSharedRowBytes = kSharedRow ? 4LL * kRowsPerBlock * kItems * kVec * kThreadsPerRow : 0;

static_assert(kThreadsPerRow <= 32 || kThreadsPerRow % 32 == 0, "threads_per_row above 32 must be whole warps");
static_assert(kBlockThreads % kThreadsPerRow == 0, "block_threads must be a multiple of threads_per_row");

#if KT_CLUSTER_SIZE > 1
// Cluster operations in PTX (sm_90): a barrier over every thread of the cluster's blocks, and a
// load from another block's shared memory (distributed shared memory). Plain PTX keeps the
// run-time compile free of the cooperative_groups headers. NVIDIA only: HIP spaces keep
// cluster_size at 1.
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}
__device__ __forceinline__ float load_from_block(const float* local, unsigned rank) {
  const unsigned address = static_cast<unsigned>(__cvta_generic_to_shared(local));
  unsigned remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(address), "r"(rank));
  float value;
  asm volatile("ld.shared::cluster.f32 %0, [%1];" : "=f"(value) : "r"(remote) : "memory");
  return value;
}
#endif

__device__ __forceinline__ int lane() { return threadIdx.x % kThreadsPerRow; }
__device__ __forceinline__ int row_in_block() { return threadIdx.x / kThreadsPerRow; }
__device__ __forceinline__ int cluster_rank() { return kCluster > 1 ? int(blockIdx.x % kCluster) : 0; }

#if KT_RUNTIME_DIMS
__shared__ long long block_row_cols;  // written by for_each_row before any row is touched
__device__ __forceinline__ long long row_cols() { return block_row_cols; }
#else
__device__ __forceinline__ constexpr long long row_cols() { return kMaxCols; }
#endif
__device__ __forceinline__ long long slice_cols() { return slice_cols_of(row_cols()); }
// Vector accesses need every row to start on a vector boundary.
__device__ __forceinline__ bool rows_aligned() { return row_cols() % kVec == 0; }

// First column of item i of this thread.
__device__ __forceinline__ long long item_column(int i) {
  return cluster_rank() * slice_cols() + ((long long)i * kThreadsPerRow + lane()) * kVec;
}
// Whether the item's first element lies in this block's slice (and in the row).
__device__ __forceinline__ bool item_present(int i) {
  if (kFull) return true;
  const long long offset = ((long long)i * kThreadsPerRow + lane()) * kVec;
  return offset < slice_cols() && cluster_rank() * slice_cols() + offset < row_cols();
}
// Whether the whole item can move as one vector access.
__device__ __forceinline__ bool item_whole(int i) {
  return rows_aligned() && (kFull || (item_present(i) && item_column(i) + kVec <= row_cols()));
}
// Whether element v of item i is part of the row (and this slice).
__device__ __forceinline__ bool element_present(int i, int v) {
  return kFull || (item_present(i) && item_column(i) + v < row_cols());
}

// One thread's elements of one row: ITEMS x VEC floats, in registers or in shared memory.
struct RowValues {
#if KT_ROW_STORAGE == KT_ROW_STORAGE_shared
  float* base;  // element (i, v) at base[(i * kVec + v) * kThreadsPerRow]
  __device__ __forceinline__ RowValues() {
    extern __shared__ float kt_row_cache[];
    base = kt_row_cache + (long long)row_in_block() * kItems * kVec * kThreadsPerRow + lane();
  }
  __device__ __forceinline__ float& at(int i, int v) { return base[(i * kVec + v) * kThreadsPerRow]; }
#else
  float values[kItems][kVec];
  __device__ __forceinline__ float& at(int i, int v) { return values[i][v]; }
#endif
};

// Reads item i of a row (pointer to the row's column 0) into `out`; absent elements read `pad`.
// HINT: kCacheStreaming for data read once, kCacheDefault for data every row reads again.
template <int HINT>
__device__ __forceinline__ void load_item(const T* row, int i, float (&out)[kVec], float pad) {
#if KT_RUNTIME_DIMS
  // Element by element, each load predicated and none behind a branch, so the unrolled loops
  // issue every item's loads before the first is used (a branch per item, aligned rows or not,
  // would wait out the memory latency item by item: 2.7x slower on an H100). An absent element
  // reads the row's first one and drops it.
  (void)HINT;
#pragma unroll
  for (int v = 0; v < kVec; ++v) {
    const bool present = element_present(i, v);
    const float value = to_float(row[present ? item_column(i) + v : 0]);
    out[v] = present ? value : pad;
  }
#else
  if (item_whole(i)) {
    load_floats<T, kVec, HINT>(row + item_column(i), out);
  } else {
#pragma unroll
    for (int v = 0; v < kVec; ++v) out[v] = element_present(i, v) ? to_float(row[item_column(i) + v]) : pad;
  }
#endif
}

// Writes item i of `values` to a row.
__device__ __forceinline__ void store_item(T* row, int i, const float (&values)[kVec]) {
  if (item_whole(i)) {
    store_floats<T, kVec, kHint>(row + item_column(i), values);
  } else {
#pragma unroll
    for (int v = 0; v < kVec; ++v)
      if (element_present(i, v)) row[item_column(i) + v] = from_float<T>(values[v]);
  }
}

__device__ __forceinline__ void get_item(RowValues& row, int i, float (&out)[kVec]) {
#pragma unroll
  for (int v = 0; v < kVec; ++v) out[v] = row.at(i, v);
}
__device__ __forceinline__ void put_item(RowValues& row, int i, const float (&in)[kVec]) {
#pragma unroll
  for (int v = 0; v < kVec; ++v) row.at(i, v) = in[v];
}

struct Sum {
  __device__ __forceinline__ float operator()(float a, float b) const { return a + b; }
};
struct Max {
  __device__ __forceinline__ float operator()(float a, float b) const { return fmaxf(a, b); }
};

// Combines a value over the threads of a row in this block, then over the blocks of the
// cluster. Every thread of the block calls each reduction, in the same order (rows past the end
// included): reductions synchronise the block and the cluster.
struct Reducer {
  // Cluster partials go to two shared buffers in turn; every thread counts the turns itself.
  // A block can overwrite a buffer only after the next cluster barrier, by which time every
  // block has finished reading it.
  int turn = 0;

  template <typename Op>
  __device__ __forceinline__ float operator()(float x, Op op) {
    constexpr int kGroup = kThreadsPerRow < 32 ? kThreadsPerRow : 32;
#pragma unroll
    for (int offset = kGroup / 2; offset > 0; offset /= 2) x = op(x, shfl_xor(x, offset));
    if constexpr (kThreadsPerRow > 32) {
      constexpr int kWarps = kThreadsPerRow > 32 ? kThreadsPerRow / 32 : 1;  // (checked even when discarded)
      __shared__ float scratch[kRowsPerBlock * kWarps];
      const int warp = lane() / 32;
      if (threadIdx.x % 32 == 0) scratch[row_in_block() * kWarps + warp] = x;
      __syncthreads();
      x = scratch[row_in_block() * kWarps];
#pragma unroll
      for (int w = 1; w < kWarps; ++w) x = op(x, scratch[row_in_block() * kWarps + w]);
      __syncthreads();  // scratch is reused by the next reduction
    }
#if KT_CLUSTER_SIZE > 1
    __shared__ float partials[2][kRowsPerBlock];
    float* mine = &partials[turn][row_in_block()];
    turn ^= 1;
    if (lane() == 0) *mine = x;
    cluster_sync();
    x = load_from_block(mine, 0);
#pragma unroll
    for (int r = 1; r < kCluster; ++r) x = op(x, load_from_block(mine, r));
#endif
    return x;
  }
  __device__ __forceinline__ float sum(float x) { return (*this)(x, Sum{}); }
  __device__ __forceinline__ float max(float x) { return (*this)(x, Max{}); }
};

// Runs body(row, active) for each row of this thread's group: one row per group, or, with a
// persistent grid, every (gridDim.x / CLUSTER_SIZE) * ROWS_PER_BLOCK-th row. `active` is false
// for rows past the end; those threads still take part in the reductions. A cluster's blocks
// visit the same rows, so they meet at the same barriers and finish together. `cols` is the
// kernel's argument: the row width with KT_RUNTIME_DIMS, else equal to the compiled one.
template <typename Body>
__device__ __forceinline__ void for_each_row(long long rows, long long cols, Body body) {
#if KT_RUNTIME_DIMS
  if (threadIdx.x == 0) block_row_cols = cols;
  __syncthreads();
#else
  (void)cols;
#endif
  const long long first = (long long)(blockIdx.x / kCluster) * kRowsPerBlock + row_in_block();
  const long long stride = (long long)(gridDim.x / kCluster) * kRowsPerBlock;
  for (long long row = first;; row += stride) {
    const bool active = row < rows;
    if (__syncthreads_or(active) == 0) break;
    body(row, active);
  }
#if KT_CLUSTER_SIZE > 1
  // No block may exit while a neighbour may still read its shared memory.
  cluster_sync();
#endif
}

}  // namespace rows
}  // namespace kt
