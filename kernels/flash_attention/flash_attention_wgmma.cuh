// Flash attention, Hopper path (sm_90a): fp16/bf16, head_dim 64 or 128, fp32 softmax and
// accumulators; wgmma for both products, TMA for every load, warp specialisation.
//
// A block of (KT_CONSUMERS + 1) warpgroups takes 64 * KT_CONSUMERS query rows of one head:
//   - warpgroup 0 is the producer: one thread loads the block's Q tile once, then streams the
//     head's keys and values, KT_BLOCK_KV rows at a time, into a ring of KT_STAGES shared-memory
//     stages with TMA (each tile as 128-byte-swizzled boxes of 64 head elements), each stage
//     completing on its "full" mbarrier and refilled after its "empty" one;
//   - each consumer warpgroup owns 64 query rows: for every stage it computes S = Q·Kᵀ with
//     wgmma (both operands K-major in shared memory), masks and updates the online softmax in
//     registers (base 2, the scale folded into the exponent), rescales O, packs P to 16 bits in
//     registers and adds P·V with wgmma taking A from registers and V MN-major (transposed) from
//     shared memory, then releases the stage. (A software-pipelined consumer, issuing the next
//     block's Q·Kᵀ before this block's P·V, was measured on the H200 and never won with two or
//     three consumers interleaving on the tensor cores: reports/attention.md, run 5.)
// The producer gives its registers to the consumers (setmaxnreg; three consumers fit 160 each).
// One to three blocks share an SM (KT_BLOCKS_PER_SM), each launched with its share of registers:
// ptxas needs that share to hold the largest single wgmma's accumulators and operands, the
// consumers' whole loop fits in what setmaxnreg gives them (the space's constraints say both).
// Loads past a head's rows read the next head's rows (or zeros past the tensor); those keys are
// masked and those queries not stored. Causal launches run the query blocks that see the most keys first.
#pragma once

#include "kernels/common/cuda_hopper.cuh"
#include "kernels/common/cuda_mma.cuh"
#include "kernels/common/cuda_wgmma.cuh"

namespace kt::attention {

using kt::hopper::barrier_arrive;
using kt::hopper::barrier_expect_bytes;
using kt::hopper::barrier_init;
using kt::hopper::barrier_wait;
using kt::hopper::tile_descriptor;
using kt::hopper::tma_load;
using kt::hopper::TensorMap;

constexpr int kConsumers = KT_CONSUMERS, BQ = 64 * kConsumers, kStages = KT_STAGES;
constexpr int kThreads = (kConsumers + 1) * 128;
constexpr int kSlices = D / 64;                  // 128-byte boxes across the head
constexpr int kQBytes = BQ * D * 2;              // the Q tile, kSlices boxes of BQ x 128 B
constexpr int kKvBytes = BKV * D * 2;            // one K (or V) tile, kSlices boxes of BKV x 128 B
static_assert(sizeof(T) == 2 && (D == 64 || D == 128), "wgmma path: 16-bit types, head_dim 64 or 128");
static_assert(kConsumers >= 1 && kConsumers <= 3, "one to three consumer warpgroups");
static_assert(BKV == 64 || BKV == 128 || BKV == 256, "wgmma n of S");
// Registers per thread. KT_BLOCKS_PER_SM blocks share an SM's 64K registers; each block is
// launched with an equal share per thread, then the producer gives most of its share to the
// consumers (setmaxnreg, whose counts are multiples of 8 from 24 to 256). Two or three small
// blocks per SM overlap one block's pipeline start and final stores with another's products,
// which matters when a block sees few keys.
__host__ __device__ constexpr int smaller(int a, int b) { return a < b ? a : b; }
constexpr int kBlocksPerSm = KT_BLOCKS_PER_SM;
constexpr int kLaunchRegisters = smaller(65536 / kBlocksPerSm / kThreads, 255) & ~7;
constexpr int kWarpgroupShare = kLaunchRegisters * kThreads / 128;  // per thread of one warpgroup
constexpr int kConsumerRegisters = smaller((kWarpgroupShare - 24) / kConsumers & ~7, 240);
constexpr int kProducerRegisters = smaller(kWarpgroupShare - kConsumers * kConsumerRegisters, kLaunchRegisters);
// A lone consumer at one block per SM already has every register it can use.
constexpr bool kMoveRegisters = kConsumerRegisters > kLaunchRegisters;
static_assert(kProducerRegisters >= 24 && kProducerRegisters % 8 == 0, "setmaxnreg: 24 to 256 registers in steps of 8");
static_assert(!kMoveRegisters || 128 * (kProducerRegisters + kConsumers * kConsumerRegisters) <= kLaunchRegisters * kThreads,
              "setmaxnreg.inc waits forever for registers that do not exist");
static_assert(KT_BLOCK_Q == BQ, "block_q is 64 rows per consumer warpgroup");

__device__ __forceinline__ void advance(int& stage, unsigned& phase) {
  if (++stage == kStages) {
    stage = 0;
    phase ^= 1;
  }
}

// Zeroes `score` and issues S = Q·Kᵀ over the head's 128-byte slices, four k16 steps (32 bytes)
// each, as one wgmma group.
__device__ __forceinline__ void issue_scores(float (&score)[BKV / 2], const unsigned char* q_rows,
                                             const unsigned char* k_stage) {
#pragma unroll
  for (int e = 0; e < BKV / 2; ++e) score[e] = 0.f;
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll
  for (int s = 0; s < kSlices; ++s)
#pragma unroll
    for (int step = 0; step < 4; ++step)
      kt::wgmma::mma_async<BKV>(score, tile_descriptor(q_rows + s * BQ * 128 + step * 32),
                                tile_descriptor(k_stage + s * BKV * 128 + step * 32));
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}

// Issues O += P·V as one wgmma group: V is MN-major, its two 64-element halves of the head
// BKV * 128 bytes apart (the descriptor's leading offset).
__device__ __forceinline__ void issue_values(float (&out)[D / 2], const unsigned (&p)[BKV / 16][4],
                                             const unsigned char* v_stage) {
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll
  for (int kk = 0; kk < BKV / 16; ++kk)
    kt::wgmma::mma_async_rs<D>(out, p[kk], tile_descriptor(v_stage + kk * 16 * 128, BKV * 128));
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}

}  // namespace kt::attention

extern "C" __global__ void __launch_bounds__(kt::attention::kThreads, kt::attention::kBlocksPerSm)
    KT_ATTENTION_ENTRY(const kt::attention::T* __restrict__, const kt::attention::T* __restrict__,
                       const kt::attention::T* __restrict__, kt::attention::T* __restrict__ o,
                       float* __restrict__ lse, const float* __restrict__ scale KT_ATTENTION_MASK_TENSOR, long long,
                       long long heads, long long kv_heads, long long seq_q, long long seq_kv, long long,
                       long long KT_ATTENTION_MASK_DIMS, const __grid_constant__ kt::hopper::TensorMap tma_q,
                       const __grid_constant__ kt::hopper::TensorMap tma_k,
                       const __grid_constant__ kt::hopper::TensorMap tma_v) {
  using namespace kt::attention;
  KT_ATTENTION_MASK;
  extern __shared__ unsigned char shared_raw[];
  // 128-byte swizzled tiles must start on 1024-byte boundaries (launch.shared_bytes has the slack).
  unsigned char* shared = reinterpret_cast<unsigned char*>((reinterpret_cast<unsigned long long>(shared_raw) + 1023) & ~1023ull);
  unsigned char* q_tile = shared;
  unsigned char* k_tiles = q_tile + kQBytes;
  unsigned char* v_tiles = k_tiles + kStages * kKvBytes;
  __shared__ __align__(8) unsigned long long q_full, full[kStages], empty[kStages];

  const Lengths len{heads, kv_heads == 0 ? heads : kv_heads, seq_q, seq_kv};
  const long long q_block = kCausal ? gridDim.x - 1 - blockIdx.x : blockIdx.x;
  const long long head = blockIdx.y, batch = blockIdx.z;
  const long long kv_head = head / (len.heads / len.kv_heads);
  const long long i0 = q_block * BQ;
  const long long last_row = (i0 + BQ < seq_q ? i0 + BQ : seq_q) - 1;
  // The blocks of keys the block visits: up to the causal bound of its last row, or those its row
  // of a block mask keeps, listed after the V stages (every thread calls it: a mask's listing
  // synchronises the block).
  const auto keys = mask.key_blocks(head, i0, static_cast<int>((len.keys_visible(last_row) + BKV - 1) / BKV),
                                    reinterpret_cast<int*>(v_tiles + kStages * kKvBytes));
  const int kv_blocks = keys.count();

  if (threadIdx.x == 0) {
    barrier_init(&q_full, 1);
    for (int s = 0; s < kStages; ++s) {
      barrier_init(&full[s], 1);
      barrier_init(&empty[s], kConsumers * 128);
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  const int warpgroup = threadIdx.x / 128;

  if (warpgroup == 0) {
    if constexpr (kMoveRegisters) asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(kProducerRegisters));
    if (threadIdx.x != 0 || kv_blocks == 0) return;
    const int q_row = static_cast<int>((batch * heads + head) * seq_q + i0);
    const int kv_row = static_cast<int>((batch * len.kv_heads + kv_head) * seq_kv);
    barrier_expect_bytes(&q_full, kQBytes);
#pragma unroll
    for (int s = 0; s < kSlices; ++s) tma_load(q_tile + s * BQ * 128, &tma_q, s * 64, q_row, &q_full);
    int stage = 0;
    unsigned phase = 0;
    for (int j = 0; j < kv_blocks; ++j) {
      barrier_wait(&empty[stage], phase ^ 1);  // a fresh barrier counts as released
      barrier_expect_bytes(&full[stage], 2 * kKvBytes);
#pragma unroll
      for (int s = 0; s < kSlices; ++s) {
        tma_load(k_tiles + stage * kKvBytes + s * BKV * 128, &tma_k, s * 64, kv_row + static_cast<int>(keys.start(j)),
                 &full[stage]);
        tma_load(v_tiles + stage * kKvBytes + s * BKV * 128, &tma_v, s * 64, kv_row + static_cast<int>(keys.start(j)),
                 &full[stage]);
      }
      advance(stage, phase);
    }
    return;
  }

  if constexpr (kMoveRegisters) asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(kConsumerRegisters));
  const int consumer = warpgroup - 1;
  const int lane = threadIdx.x % 32, warp = (threadIdx.x % 128) / 32;
  const long long row_base = i0 + consumer * 64 + warp * 16 + lane / 4;  // rows row_base and row_base + 8
  const long long unmasked = len.keys_visible(i0);  // blocks of keys the first row sees in full need no mask
  const float scale_log2 = 1.4426950408889634f * *scale;

  float out[D / 2];  // m64nD accumulator: column pairs 8j + 2(lane % 4) of rows row_base, row_base + 8
#pragma unroll
  for (int e = 0; e < D / 2; ++e) out[e] = 0.f;
  float row_max[2] = {-infinity(), -infinity()}, row_sum[2] = {0.f, 0.f};

  if (kv_blocks > 0) barrier_wait(&q_full, 0);
  const unsigned char* q_rows = q_tile + consumer * 64 * 128;
  const Rows rows{row_base, unmasked, scale_log2, len};
  float rescale[2];
  int stage = 0;
  unsigned phase = 0;
  for (int j = 0; j < kv_blocks; ++j) {
    barrier_wait(&full[stage], phase);
    float score[BKV / 2];
    issue_scores(score, q_rows, k_tiles + stage * kKvBytes);
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
    softmax_update(score, keys.tile(j), rows, row_max, row_sum, rescale);
    rescale_output(out, rescale);
    unsigned p[BKV / 16][4];
    pack_probabilities(score, p);
    issue_values(out, p, v_tiles + stage * kKvBytes);
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
    barrier_arrive(&empty[stage]);
    advance(stage, phase);
  }

  store_rows(out, row_max, row_sum, row_base, o + (batch * heads + head) * seq_q * D,
             lse + (batch * heads + head) * seq_q, seq_q);
}
