// RMSNorm per head + NeoX RoPE on CUDA (QK-norm + rotary): one group of THREADS_PER_HEAD lanes
// (a power of two <= 32, so a group never leaves its warp) per (row, head) vector, the vector
// held in registers between the reduction and the write. With half = head_dim / 2, each lane
// owns matching pairs: VEC contiguous elements at offset j of the first half and the VEC at
// j + half, j = (item * THREADS_PER_HEAD + lane) * VEC, so the rotation needs no shuffle:
//   y[d] = x[d] * inv_rms * weight[d]
//   out[j] = y[j] * cos[row, j] - y[j + half] * sin[row, j]
//   out[j + half] = y[j + half] * cos[row, j] + y[j] * sin[row, j]
// Defines (search_spaces/rmsnorm_rope.cuda.json): KT_BLOCK_THREADS, KT_THREADS_PER_HEAD,
// KT_VECTOR_BYTES, KT_BLOCKS_PER_SM (0: one group per vector, else a persistent grid); KT_T;
// KT_DIM_HEADS and KT_DIM_HEAD_DIM (so the per-lane item count is a constant). With
// KT_RUNTIME_DIMS=1 (the variants ktune::kernels carries for shapes nobody tuned) heads and
// head_dim are the kernel's arguments and KT_DIM_HEAD_DIM only bounds head_dim.
#include "kernels/common/cuda_common.cuh"

namespace {

using T = KT_T;
constexpr int kThreadsPerHead = KT_THREADS_PER_HEAD;
constexpr int kGroupsPerBlock = KT_BLOCK_THREADS / KT_THREADS_PER_HEAD;
constexpr int kVec = KT_VECTOR_BYTES / int(sizeof(T)) > 0 ? KT_VECTOR_BYTES / int(sizeof(T)) : 1;
#ifndef KT_RUNTIME_DIMS
#define KT_RUNTIME_DIMS 0
#endif
constexpr long long kMaxHeadDim = KT_DIM_HEAD_DIM;  // exact, or with KT_RUNTIME_DIMS a bound
constexpr int kItems = int((kMaxHeadDim / 2 + kThreadsPerHead * kVec - 1) / (kThreadsPerHead * kVec));
constexpr float kEpsilon = 1e-6f;

static_assert(kThreadsPerHead >= 1 && kThreadsPerHead <= 32 && (kThreadsPerHead & (kThreadsPerHead - 1)) == 0,
              "threads_per_head must be a power of two <= 32");
static_assert(KT_BLOCK_THREADS % 32 == 0, "block_threads must be a whole number of warps");
static_assert(kMaxHeadDim % 2 == 0, "head_dim must be even");

}  // namespace

extern "C" __global__ void __launch_bounds__(KT_BLOCK_THREADS)
    rmsnorm_rope_kernel(const T* __restrict__ x, const T* __restrict__ weight, const T* __restrict__ cos_table,
                        const T* __restrict__ sin_table, T* __restrict__ out, long long rows, long long heads,
                        long long head_dim) {
#if KT_RUNTIME_DIMS
  const long long kHeads = heads, kHeadDim = head_dim;
#else
  (void)heads;
  (void)head_dim;  // both are compile-time constants of the variant (KT_DIM_HEADS, KT_DIM_HEAD_DIM)
  constexpr long long kHeads = KT_DIM_HEADS, kHeadDim = KT_DIM_HEAD_DIM;
#endif
  const long long kHalf = kHeadDim / 2;
  // Vector accesses need every half (of x, weight, cos and sin rows) to start on a vector
  // boundary: half % VEC == 0 makes head_dim, the head bases and the cos/sin rows multiples too.
  const bool kAligned = kHalf % kVec == 0;
  const int lane = threadIdx.x % kThreadsPerHead;
  const long long vectors = rows * kHeads;
  for (long long vec = (long long)blockIdx.x * kGroupsPerBlock + threadIdx.x / kThreadsPerHead; ;
       vec += (long long)gridDim.x * kGroupsPerBlock) {
    // Groups never straddle warps, so the whole warp takes part in each reduction round, groups
    // past the end included; it leaves once none of its groups has a vector left.
    const bool active = vec < vectors;
    if (!kt::lanes_any(active)) break;
    const long long v = active ? vec : 0;
    const T* in = x + v * kHeadDim;
    float lo[kItems][kVec], hi[kItems][kVec];
    float sum_sq = 0.f;
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      const long long j = ((long long)i * kThreadsPerHead + lane) * kVec;
#if KT_RUNTIME_DIMS
      // Without branches, so every item's loads are issued before the first is used: an absent
      // item or element reads the head's first one and drops it. With whole vectors per half,
      // an item is either whole or absent.
      if (kAligned) {
        const bool whole = j < kHalf;
        kt::load_floats<T, kVec>(in + (whole ? j : 0), lo[i]);
        kt::load_floats<T, kVec>(in + kHalf + (whole ? j : 0), hi[i]);
#pragma unroll
        for (int e = 0; e < kVec; ++e) {
          lo[i][e] = whole ? lo[i][e] : 0.f;
          hi[i][e] = whole ? hi[i][e] : 0.f;
        }
      } else {
#pragma unroll
        for (int e = 0; e < kVec; ++e) {
          const bool inside = j + e < kHalf;
          const float l = kt::to_float(in[inside ? j + e : 0]), h = kt::to_float(in[inside ? kHalf + j + e : 0]);
          lo[i][e] = inside ? l : 0.f;
          hi[i][e] = inside ? h : 0.f;
        }
      }
#else
      if (kAligned && j + kVec <= kHalf) {
        kt::load_floats<T, kVec>(in + j, lo[i]);
        kt::load_floats<T, kVec>(in + kHalf + j, hi[i]);
      } else {
#pragma unroll
        for (int e = 0; e < kVec; ++e) {
          const bool inside = j + e < kHalf;
          lo[i][e] = inside ? kt::to_float(in[j + e]) : 0.f;
          hi[i][e] = inside ? kt::to_float(in[kHalf + j + e]) : 0.f;
        }
      }
#endif
#pragma unroll
      for (int e = 0; e < kVec; ++e) sum_sq += lo[i][e] * lo[i][e] + hi[i][e] * hi[i][e];
    }
    sum_sq = kt::group_sum<kThreadsPerHead>(sum_sq);
    if (!active) continue;
    const float inv_rms = rsqrtf(sum_sq / float(kHeadDim) + kEpsilon);
#if KT_RUNTIME_DIMS
    // A 32-bit division where the indices fit (a 64-bit one is a long software routine).
    const long long row = v < (1LL << 32) && kHeads < (1LL << 32) ? static_cast<unsigned>(v) / static_cast<unsigned>(kHeads)
                                                                   : v / kHeads;
#else
    const long long row = v / kHeads;
#endif
    const T* cos_row = cos_table + row * kHalf;
    const T* sin_row = sin_table + row * kHalf;
    T* dst = out + v * kHeadDim;
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      const long long j = ((long long)i * kThreadsPerHead + lane) * kVec;
      if (kAligned && j + kVec <= kHalf) {
        float w_lo[kVec], w_hi[kVec], c[kVec], s[kVec], out_lo[kVec], out_hi[kVec];
        kt::load_floats<T, kVec>(weight + j, w_lo);
        kt::load_floats<T, kVec>(weight + kHalf + j, w_hi);
        kt::load_floats<T, kVec>(cos_row + j, c);
        kt::load_floats<T, kVec>(sin_row + j, s);
#pragma unroll
        for (int e = 0; e < kVec; ++e) {
          const float a = lo[i][e] * inv_rms * w_lo[e];
          const float b = hi[i][e] * inv_rms * w_hi[e];
          out_lo[e] = a * c[e] - b * s[e];
          out_hi[e] = b * c[e] + a * s[e];
        }
        kt::store_floats<T, kVec>(dst + j, out_lo);
        kt::store_floats<T, kVec>(dst + kHalf + j, out_hi);
      } else {
#pragma unroll
        for (int e = 0; e < kVec; ++e) {
          if (j + e < kHalf) {
            const float a = lo[i][e] * inv_rms * kt::to_float(weight[j + e]);
            const float b = hi[i][e] * inv_rms * kt::to_float(weight[kHalf + j + e]);
            const float c = kt::to_float(cos_row[j + e]), s = kt::to_float(sin_row[j + e]);
            dst[j + e] = kt::from_float<T>(a * c - b * s);
            dst[kHalf + j + e] = kt::from_float<T>(b * c + a * s);
          }
        }
      }
    }
  }
}
