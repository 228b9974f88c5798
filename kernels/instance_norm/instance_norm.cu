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
// Defines (search_spaces/instance_norm.cuda.json): KT_BLOCK_THREADS, KT_THREADS_PER_ROW,
// KT_VECTOR_BYTES, KT_BLOCKS_PER_SM (launch geometry only), KT_CLUSTER_SIZE, KT_ROW_STORAGE,
// KT_STREAMING; KT_T; KT_DIM_HEIGHT and KT_DIM_WIDTH (the plane size is compiled in).
#define KT_DIM_COLS (KT_DIM_HEIGHT * KT_DIM_WIDTH)
// A third storage beside cuda_rows.cuh's two (registers 0, shared 1), which this kernel alone
// handles; to cuda_rows.cuh it is "not shared", so no shared memory is reserved for it.
#define KT_ROW_STORAGE_memory 2
#include "kernels/layernorm/cuda_layernorm_row.cuh"

namespace kt {

// The plane at `row` normalised by reading it three times; every thread of the block calls it.
__device__ __forceinline__ void instance_norm_rereading(const rows::T* __restrict__ row, float g, float b,
                                                        rows::Reducer& reduce, bool active,
                                                        rows::T* __restrict__ out) {
  using namespace rows;
  float sum = 0.f;
#pragma unroll 4
  for (int i = 0; i < kItems; ++i) {
    float item[kVec];
    load_item<kCacheDefault>(row, i, item, 0.f);
#pragma unroll
    for (int v = 0; v < kVec; ++v) sum += item[v];
  }
  const float mean = reduce.sum(sum) / float(row_cols());
  float sum_sq = 0.f;
#pragma unroll 4
  for (int i = 0; i < kItems; ++i) {
    float item[kVec];
    load_item<kCacheDefault>(row, i, item, mean);  // absent elements deviate by 0
#pragma unroll
    for (int v = 0; v < kVec; ++v) sum_sq += (item[v] - mean) * (item[v] - mean);
  }
  const float scale = rsqrtf(reduce.sum(sum_sq) / float(row_cols()) + kLayerNormEpsilon) * g;
  if (!active) return;
#pragma unroll 4
  for (int i = 0; i < kItems; ++i) {
    if (!item_present(i)) continue;
    float item[kVec];
    load_item<kHint>(row, i, item, 0.f);  // the last read of the plane
#pragma unroll
    for (int v = 0; v < kVec; ++v) item[v] = (item[v] - mean) * scale + b;
    store_item(out, i, item);
  }
}

}  // namespace kt

extern "C" __global__ void __launch_bounds__(KT_BLOCK_THREADS)
    instance_norm_kernel(const kt::rows::T* __restrict__ x, const kt::rows::T* __restrict__ gamma,
                         const kt::rows::T* __restrict__ beta, kt::rows::T* __restrict__ out, long long batch,
                         long long channels, long long height, long long width) {
  using namespace kt::rows;
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
}
