// InstanceNorm on CUDA (and HIP): each (batch, channel) plane of height * width elements is a
// row of the row kernels (kernels/common/cuda_rows.cuh), normalised as LayerNorm normalises a
// row (two-pass statistics in float) and scaled and shifted by its channel's gamma and beta.
//
// Plane storage (KT_ROW_STORAGE): `registers` and `shared` keep the plane on chip between its
// one read and its write (LayerNorm's kernel, kernels/layernorm/cuda_layernorm_row.cuh); a
// plane too large for one block's registers or shared memory can still stay on chip when a
// thread-block cluster of up to 8 blocks splits it (Hopper; the partial sums meet in distributed
// shared memory). `memory` keeps nothing: each of the three passes (sum, squared deviations,
// output) reads the plane again, mostly from L2, so any plane size runs, on any GPU.
//
// Split (KT_SPLIT > 1): a few large planes (3 planes of 1024^2) leave most SMs idle even split
// over a cluster of 8. Each plane is then split over SPLIT blocks anywhere on the GPU, each
// holding its slice in registers (or reading it again for each pass: row_storage=memory): a block writes its slice's count, mean and squared deviations
// to the workspace, arrives on its plane's counter, waits until the plane's SPLIT blocks have
// arrived, and merges their statistics (Chan's parallel variance). The wait is safe because the
// space launches no more blocks than SMs, all resident at once. The counters are never reset:
// each launch adds SPLIT per plane (a power of two, so the count wraps cleanly at 2^32), and a
// block waits for the next multiple of SPLIT from the value it found.
// Defines (search_spaces/instance_norm.cuda.json): KT_BLOCK_THREADS, KT_THREADS_PER_ROW,
// KT_VECTOR_BYTES, KT_BLOCKS_PER_SM (launch geometry only), KT_CLUSTER_SIZE, KT_ROW_STORAGE,
// KT_STREAMING, KT_SPLIT; KT_T; KT_DIM_HEIGHT and KT_DIM_WIDTH (the plane size is compiled in).
#define KT_DIM_COLS (KT_DIM_HEIGHT * KT_DIM_WIDTH)
// A third storage beside cuda_rows.cuh's two (registers 0, shared 1), which this kernel alone
// handles; to cuda_rows.cuh it is "not shared", so no shared memory is reserved for it.
#define KT_ROW_STORAGE_memory 2
#ifndef KT_SPLIT
#define KT_SPLIT 1
#endif
#include "kernels/layernorm/cuda_layernorm_row.cuh"

// A run-time-dims variant (KT_RUNTIME_DIMS: ktune::kernels' variant for planes nobody compiled)
// takes any height and width: only the storage that keeps nothing between passes needs no bound
// on the plane, and the split's slices are compiled in.
static_assert(!KT_RUNTIME_DIMS || (KT_ROW_STORAGE == KT_ROW_STORAGE_memory && KT_SPLIT == 1),
              "a run-time-dims instance_norm variant must be row_storage=memory without split");

namespace kt {

// Items of a thread's share of the plane: compiled in, or the plane's own count at run time.
__device__ __forceinline__ int plane_items() {
#if KT_RUNTIME_DIMS
  return rows::items_of(rows::slice_cols());
#else
  return rows::kItems;
#endif
}

// The plane at `row` normalised by reading it three times; every thread of the block calls it.
__device__ __forceinline__ void instance_norm_rereading(const rows::T* __restrict__ row, float g, float b,
                                                        rows::Reducer& reduce, bool active,
                                                        rows::T* __restrict__ out) {
  using namespace rows;
  const int items = plane_items();
  float sum = 0.f;
#pragma unroll 4
  for (int i = 0; i < items; ++i) {
    float item[kVec];
    load_item<kCacheDefault>(row, i, item, 0.f);
#pragma unroll
    for (int v = 0; v < kVec; ++v) sum += item[v];
  }
  const float mean = reduce.sum(sum) / float(row_cols());
  float sum_sq = 0.f;
#pragma unroll 4
  for (int i = 0; i < items; ++i) {
    float item[kVec];
    load_item<kCacheDefault>(row, i, item, mean);  // absent elements deviate by 0
#pragma unroll
    for (int v = 0; v < kVec; ++v) sum_sq += (item[v] - mean) * (item[v] - mean);
  }
  const float scale = rsqrtf(reduce.sum(sum_sq) / float(row_cols()) + kLayerNormEpsilon) * g;
  if (!active) return;
#pragma unroll 4
  for (int i = 0; i < items; ++i) {
    if (!item_present(i)) continue;
    float item[kVec];
    load_item<kHint>(row, i, item, 0.f);  // the last read of the plane
#pragma unroll
    for (int v = 0; v < kVec; ++v) item[v] = (item[v] - mean) * scale + b;
    store_item(out, i, item);
  }
}

#if KT_SPLIT > 1
namespace split {

using rows::kVec;
constexpr int kSplit = KT_SPLIT;
static_assert((kSplit & (kSplit - 1)) == 0, "split must be a power of two (the counters wrap at 2^32)");
static_assert(KT_THREADS_PER_ROW == KT_BLOCK_THREADS && KT_CLUSTER_SIZE == 1, "a split plane takes whole blocks");
static_assert(kSplit <= KT_BLOCK_THREADS, "one thread gathers each slice's statistics");
// Elements of a plane's slice: whole vectors, the last slice shorter.
constexpr long long kSliceCols = (KT_DIM_COLS + kSplit * kVec - 1) / (kSplit * kVec) * kVec;
constexpr int kItems = int((kSliceCols + KT_BLOCK_THREADS * kVec - 1) / (KT_BLOCK_THREADS * kVec));

// One slice's statistics, as the workspace keeps them after the planes' counters.
struct Partial {
  float count, mean, m2;
};

// Reads elements [c, c + kVec) of the plane `in` that lie before `end` (the others 0).
template <int HINT>
__device__ __forceinline__ void load_slice_item(const rows::T* in, long long c, long long end, bool aligned,
                                                float (&out)[rows::kVec]) {
  if (aligned && c + rows::kVec <= end) {
    load_floats<rows::T, rows::kVec, HINT>(in + c, out);
  } else {
#pragma unroll
    for (int v = 0; v < rows::kVec; ++v) out[v] = c + v < end ? to_float(in[c + v]) : 0.f;
  }
}

// The slice stays in registers between its read and its write (row_storage=registers), or each of
// the three passes reads it again (row_storage=memory: slices too large for registers; the
// planes of a few-plane problem mostly fit in L2, so the passes after the first hit it).
constexpr bool kHold = KT_ROW_STORAGE != KT_ROW_STORAGE_memory;

__device__ __forceinline__ void run(const rows::T* __restrict__ x, const rows::T* __restrict__ gamma,
                                    const rows::T* __restrict__ beta, rows::T* __restrict__ out, long long planes,
                                    long long channels, unsigned* __restrict__ workspace) {
  using namespace rows;
  const long long plane = blockIdx.x / kSplit;
  const int part = int(blockIdx.x % kSplit);
  const long long cols = KT_DIM_COLS;
  const long long begin = part * kSliceCols;
  const long long end = begin + kSliceCols < cols ? begin + kSliceCols : cols;
  const rows::T* in = x + plane * cols;
  const bool aligned = cols % kVec == 0;
  const auto column = [&](int i) { return begin + ((long long)i * KT_BLOCK_THREADS + threadIdx.x) * kVec; };
  float values[kHold ? kItems : 1][kVec];
  // Item i of the slice: from registers, or read again.
  const auto item = [&](int i, float (&out)[kVec]) {
    if constexpr (kHold) {
#pragma unroll
      for (int v = 0; v < kVec; ++v) out[v] = values[i][v];
    } else {
      load_slice_item<kCacheDefault>(in, column(i), end, aligned, out);
    }
  };
  float sum = 0.f;
#pragma unroll(kHold ? kItems : 4)
  for (int i = 0; i < kItems; ++i) {
    float loaded[kVec];
    load_slice_item<kHold ? kHint : kCacheDefault>(in, column(i), end, aligned, loaded);
#pragma unroll
    for (int v = 0; v < kVec; ++v) {
      sum += loaded[v];
      if constexpr (kHold) values[i][v] = loaded[v];
    }
  }
  Reducer reduce;
  const float count = float(end > begin ? end - begin : 0);
  const float total = reduce.sum(sum);
  const float local_mean = count > 0 ? total / count : 0.f;
  float m2 = 0.f;
#pragma unroll(kHold ? kItems : 4)
  for (int i = 0; i < kItems; ++i) {
    float current[kVec];
    item(i, current);
    const long long c = column(i);
#pragma unroll
    for (int v = 0; v < kVec; ++v) {
      const float d = c + v < end ? current[v] - local_mean : 0.f;
      m2 += d * d;
    }
  }
  m2 = reduce.sum(m2);
  // Publish this slice, arrive, wait for the plane's other slices, merge.
  unsigned* counter = workspace + plane;
  volatile Partial* partials = reinterpret_cast<volatile Partial*>(workspace + planes) + plane * kSplit;
  __shared__ float plane_mean, plane_scale;
  __shared__ Partial gathered[kSplit];
  if (threadIdx.x == 0) {
    partials[part].count = count;
    partials[part].mean = local_mean;
    partials[part].m2 = m2;
    __threadfence();
    const unsigned found = atomicAdd(counter, 1u);
    const unsigned target = (found / kSplit + 1) * kSplit;
    while (int(*reinterpret_cast<volatile unsigned*>(counter) - target) < 0) {
      __nanosleep(64);  // the waiting blocks leave the counter's L2 slice to those arriving
    }
    __threadfence();
  }
  __syncthreads();
  // The plane's partials in one round trip (one thread each), not kSplit trips of one thread.
  if (threadIdx.x < kSplit) {
    gathered[threadIdx.x].count = partials[threadIdx.x].count;
    gathered[threadIdx.x].mean = partials[threadIdx.x].mean;
    gathered[threadIdx.x].m2 = partials[threadIdx.x].m2;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    float n = 0.f, mean = 0.f, total_m2 = 0.f;
    for (int k = 0; k < kSplit; ++k) {  // Chan et al.: merge (n, mean, m2) pairwise
      const float nk = gathered[k].count, mk = gathered[k].mean, m2k = gathered[k].m2;
      if (nk == 0.f) continue;
      const float merged = n + nk, delta = mk - mean;
      mean += delta * nk / merged;
      total_m2 += m2k + delta * delta * n * nk / merged;
      n = merged;
    }
    const long long channel = plane % channels;
    plane_mean = mean;
    plane_scale = rsqrtf(total_m2 / float(cols) + kLayerNormEpsilon) * to_float(gamma[channel]);
  }
  __syncthreads();
  const float mean = plane_mean, scale = plane_scale, shift = to_float(beta[plane % channels]);
  rows::T* dst = out + plane * cols;
#pragma unroll(kHold ? kItems : 4)
  for (int i = 0; i < kItems; ++i) {
    const long long c = column(i);
    float result[kVec];
    if constexpr (kHold) {
      item(i, result);
    } else {
      load_slice_item<kHint>(in, c, end, aligned, result);  // the last read of the slice
    }
#pragma unroll
    for (int v = 0; v < kVec; ++v) result[v] = (result[v] - mean) * scale + shift;
    if (aligned && c + kVec <= end) {
      store_floats<T, kVec, kHint>(dst + c, result);
    } else {
#pragma unroll
      for (int v = 0; v < kVec; ++v)
        if (c + v < end) dst[c + v] = from_float<T>(result[v]);
    }
  }
}

}  // namespace split
#endif

}  // namespace kt

extern "C" __global__ void __launch_bounds__(KT_BLOCK_THREADS)
    instance_norm_kernel(const kt::rows::T* __restrict__ x, const kt::rows::T* __restrict__ gamma,
                         const kt::rows::T* __restrict__ beta, kt::rows::T* __restrict__ out, long long batch,
                         long long channels, long long height, long long width
#if KT_SPLIT > 1
                         ,
                         unsigned* __restrict__ workspace
#endif
) {
  using namespace kt::rows;
#if KT_SPLIT > 1
  (void)height, (void)width;
  kt::split::run(x, gamma, beta, out, batch * channels, channels, workspace);
#else
  Reducer reduce;
  for_each_row(batch * channels, height * width, [&](long long plane, bool active) {
    const long long offset = (active ? plane : 0) * row_cols();
    const long long channel = (active ? plane : 0) % channels;
    const float g = kt::to_float(gamma[channel]), b = kt::to_float(beta[channel]);
#if KT_ROW_STORAGE == KT_ROW_STORAGE_memory
    kt::instance_norm_rereading(x + offset, g, b, reduce, active, out + offset);
#else
    RowValues values;
    float sum = 0.f;
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      float item[kVec];
      load_item<kHint>(x + offset, i, item, 0.f);
#pragma unroll
      for (int v = 0; v < kVec; ++v) sum += item[v];
      put_item(values, i, item);
    }
    const auto per_plane = [g, b](int, float (&item)[kVec], float inv_std) {
      const float scale = inv_std * g;
#pragma unroll
      for (int v = 0; v < kVec; ++v) item[v] = item[v] * scale + b;
    };
    kt::normalise_row(values, sum, reduce, active, per_plane, out + offset);
#endif
  });
#endif
}
