// GEMM, Hopper path (sm_90a): tf32, fp16, bf16 or fp8 e4m3 in, fp32 accumulation. B is [n, k]
// (K-major, the layout wgmma reads for every input type) and a row of k elements a multiple of
// 16 bytes (TMA's row strides).
//
// A block of (KT_CONSUMERS + 1) warpgroups computes KT_BLOCK_M x KT_BLOCK_N tiles of D:
//   - warpgroup 0 is the producer: one thread issues TMA copies of the next slices of A and B
//     (128 bytes of k per row) into a ring of KT_STAGES shared-memory stages, each completing on the stage's "full"
//     mbarrier, and waits on the stage's "empty" mbarrier before refilling it;
//   - each consumer warpgroup owns KT_BLOCK_M / KT_CONSUMERS rows of the tile: it waits for a
//     stage, issues wgmma over it (4 k-steps of 32 bytes), waits for the previous slice's wgmma
//     (one stays in flight) and releases that slice's stage, and after the last slice applies
//     the epilogue to its registers and stores D.
// With two or three consumers the producer gives its registers to them (setmaxnreg), whose
// accumulators fill most of the register file. Three consumers (a 192-row tile, one m64 row of
// wgmma each, as cuBLAS's 192x192 Hopper kernels) get 152 each: a 64 x 192 share's 96
// accumulators and the rest without a stack (at the 128 of a thread of 512 ptxas spilled);
// 64 x 256 does not fit (the space keeps block_n <= 192 there).
// Tiles are visited in groups of KT_GROUP_M tile rows (a group's A rows
// and all of B stay in L2 while it runs); with a persistent grid (launch geometry) each block
// takes tiles gridDim.x apart and the stage ring runs on across tiles.
// Loads past the edges of A and B read zeros (TMA), stores are bounds-checked: any m and n.
//
// Clusters (KT_CLUSTER_M = 2): the two blocks of a cluster take vertically adjacent tiles, which
// read the same slices of B. Each block loads half of every B slice and multicasts it to both,
// so B crosses L2 once per pair. A block's stage is refilled only when the consumers of both
// blocks have released it (each consumer warp arrives on the "empty" barrier of both), and the
// blocks start and end on a cluster barrier (nothing may land in, or arrive at, a block that has
// not initialised its barriers or has exited).
//
// Split-K (KT_SPLIT_K > 1, for shapes whose tiles do not fill the GPU): blockIdx.y picks a part
// of the k slices; each block adds its partial sums into an fp32 [m, n] workspace, then counts
// itself in the tile's counter after the workspace; the block that counts last applies the
// epilogue to the full sums, stores D and leaves its workspace tile and counter zeroed for the
// next launch (the backend zeroes the workspace once).
//
// With a LayerNorm of A (layernorm_linear, fp16/bf16) the whole block first takes its share of
// the row statistics (RowStatistics, kernels/gemm/gemm_common.cuh; the producer's loads start
// right after), and each consumer warpgroup normalises its own rows of every A slice in shared
// memory before its wgmma reads them (generic-proxy writes, then a proxy fence and a warpgroup
// barrier): slice s + 1 while the wgmma of slice s runs. The statistics of a tile's rows are
// waited for and read when the tile starts.
#pragma once

#include "kernels/common/cuda_hopper.cuh"
#include "kernels/common/cuda_wgmma.cuh"

namespace kt::gemm {

// A slice is 128 bytes of k (64 fp16/bf16, 32 tf32, 128 fp8): one row of the 128-byte swizzle.
constexpr int BM = KT_BLOCK_M, BN = KT_BLOCK_N, BK = 128 / int(sizeof(T)), kStages = KT_STAGES, kConsumers = KT_CONSUMERS;
constexpr int kRowsPerConsumer = BM / kConsumers;
constexpr int kMTiles = kRowsPerConsumer / 64;  // wgmma m64 tiles per consumer
constexpr int kThreads = (kConsumers + 1) * 128;
constexpr int kATileBytes = BM * 128, kBTileBytes = BN * 128;
constexpr int kSteps = 4;  // wgmma k-steps of 32 bytes per slice
#ifndef KT_SPLIT_K
#define KT_SPLIT_K 1
#endif
#ifndef KT_CLUSTER_M
#define KT_CLUSTER_M 1
#endif
constexpr int kSplitK = KT_SPLIT_K, kClusterM = KT_CLUSTER_M;
constexpr int kBRowsPerBlock = BN / kClusterM;  // rows of each B slice one block of a cluster loads
static_assert(kClusterM == 1 || (kClusterM == 2 && kSplitK == 1 && kBRowsPerBlock % 8 == 0),
              "clusters of two along m, without split-K (its tile counters are per block)");

// The k slices [first, end) of split blockIdx.y (possibly empty).
__device__ __forceinline__ void split_slices(int slices, int& first, int& end) {
  const int per_split = (slices + kSplitK - 1) / kSplitK;
  first = min(slices, static_cast<int>(blockIdx.y) * per_split);
  end = min(slices, first + per_split);
}

// Barrier of the consumer warpgroups only (the producer warpgroup has left).
__device__ __forceinline__ void consumers_sync() {
  asm volatile("bar.sync 1, %0;" ::"n"(kConsumers * 128) : "memory");
}
static_assert(kRowsPerConsumer % 64 == 0 && BN % 64 == 0 && BN <= 256, "wgmma m64nNk16 tiles");

using kt::hopper::barrier_arrive;
using kt::hopper::barrier_expect_bytes;
using kt::hopper::barrier_init;
using kt::hopper::barrier_wait;
using kt::hopper::tile_descriptor;
using kt::hopper::tma_load;
using kt::hopper::TensorMap;

// The tile of block `rank` of a cluster in cluster tile t: cluster tiles (kClusterM tile rows
// by one tile column) in grouped order, KT_GROUP_M cluster rows at a time, column after column.
__device__ __forceinline__ void tile_coordinates(long long t, long long cluster_rows, long long tiles_n,
                                                 unsigned rank, long long& tile_m, long long& tile_n) {
  const long long group_size = static_cast<long long>(KT_GROUP_M) * tiles_n;
  const long long first_m = t / group_size * KT_GROUP_M;
  const long long rows_in_group = min(cluster_rows - first_m, static_cast<long long>(KT_GROUP_M));
  tile_m = (first_m + (t % group_size) % rows_in_group) * kClusterM + rank;
  tile_n = (t % group_size) / rows_in_group;
}

__device__ __forceinline__ void advance(int& stage, unsigned& phase) {
  if (++stage == kStages) {
    stage = 0;
    phase ^= 1;
  }
}

// What the end of a tile does with a thread's accumulator pairs.
enum FinishMode { kStoreD, kAddToWorkspace, kStoreWorkspaceSums };

// Accumulator layout of m64nNk16: warp w holds rows 16w..16w+15 of each m64 tile; lane l holds
// rows l/4 and l/4 + 8, columns 8j + 2(l%4) and the next, for j < N/8. row_base and col_base
// are this thread's first row and column in D. kStoreD applies the epilogue and stores D;
// kAddToWorkspace adds the pairs into the fp32 workspace [m, n]; kStoreWorkspaceSums stores the
// epilogue of the workspace's full sums and zeroes them for the next launch.
// A row's C and bias values are loaded kBatch (8 or 16) pairs at a time before any of them is
// stored: loads that follow stores one by one each wait a round trip to memory (a residual
// epilogue took 1.2x the time of none at 16384 x 4096 x 4096).
template <FinishMode kMode, int kEpi>
__device__ __forceinline__ void finish_pairs(const float (&acc)[kMTiles][BN / 2], long long row_base, long long col_base,
                                             long long m, long long n, T* d, const T* c, const T* bias, float alpha,
                                             float beta, float* workspace) {
  constexpr int kPairs = BN / 8, kBatch = kPairs % 16 == 0 ? 16 : 8;  // a divisor of kPairs (BN: a multiple of 64)
  static_assert(kPairs % kBatch == 0, "whole batches of pairs");
#pragma unroll
  for (int i = 0; i < kMTiles; ++i)
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const long long row = row_base + i * 64 + half * 8;
      if (row >= m) continue;
#pragma unroll
      for (int j0 = 0; j0 < kPairs; j0 += kBatch) {
        float v[kBatch][2];
#pragma unroll
        for (int j = 0; j < kBatch; ++j) {
          const long long col = col_base + (j0 + j) * 8;
          v[j][0] = acc[i][(j0 + j) * 4 + half * 2];
          v[j][1] = acc[i][(j0 + j) * 4 + half * 2 + 1];
          if constexpr (kMode == kAddToWorkspace) {
            if (col < n) atomicAdd(workspace + row * n + col, v[j][0]);
            if (col + 1 < n) atomicAdd(workspace + row * n + col + 1, v[j][1]);
          }
          if constexpr (kMode == kStoreWorkspaceSums) {
            const float* sums = workspace + row * n + col;
            v[j][0] = col < n ? __ldcg(sums) : 0.f;
            v[j][1] = col + 1 < n ? __ldcg(sums + 1) : 0.f;
          }
        }
        if constexpr (kMode == kAddToWorkspace) continue;
        PairInputs inputs[kBatch];
#pragma unroll
        for (int j = 0; j < kBatch; ++j) inputs[j] = load_pair_inputs<kEpi>(c, bias, row, col_base + (j0 + j) * 8, n);
#pragma unroll
        for (int j = 0; j < kBatch; ++j) {
          const long long col = col_base + (j0 + j) * 8;
          if constexpr (kMode == kStoreWorkspaceSums) {
            if (col < n) workspace[row * n + col] = 0.f;
            if (col + 1 < n) workspace[row * n + col + 1] = 0.f;
          }
          store_pair_from<kEpi>(d, v[j][0], v[j][1], inputs[j], row, col, n, alpha, beta);
        }
      }
    }
}

// gamma and beta at the 8 columns (16 bytes) of a slice this thread normalises (see
// normalise_slice), loaded a slice ahead so that their latency hides under a wgmma.
struct SliceAffine {
  Packed<T, 16 / int(sizeof(T))> gamma, beta;
  bool in_k;  // false past k: the slice holds TMA's zeros there, which meet B's zeros
};

__device__ __forceinline__ long long affine_column(int slice) {
  const int thread = static_cast<int>(threadIdx.x % 128);
  return static_cast<long long>(slice) * BK + ((thread % 8) ^ (thread / 8 % 8)) * (16 / int(sizeof(T)));
}

template <class ALoad>
__device__ __forceinline__ SliceAffine load_affine(const ALoad& a_load, long long k, int slice) {
  SliceAffine affine;
  const long long col = affine_column(slice);
  affine.in_k = col < k;
  using Raw = decltype(affine.gamma.raw);
  if (affine.in_k) {
    affine.gamma.raw = *reinterpret_cast<const Raw*>(a_load.gamma + col);
    affine.beta.raw = *reinterpret_cast<const Raw*>(a_load.beta + col);
  }
  return affine;
}

// Normalises the warpgroup's rows of the A slice at a_rows (128-byte swizzled rows: chunk c of
// row r lies at chunk c ^ (r % 8)), in place, and makes the writes visible to wgmma. Thread t
// takes chunk t % 8 of rows t / 8 + 16 j: its rows share r % 8, so all its chunks hold the same
// 8 columns, whose gamma and beta come in `affine`. The chunks are read, normalised and written
// in batches of 4, so their loads are in flight together.
__device__ __forceinline__ void normalise_slice(const SliceAffine& affine, unsigned char* a_rows, const float* mean,
                                                const float* inv_std) {
  constexpr int kVec = 16 / int(sizeof(T));
  constexpr int kChunks = kRowsPerConsumer / 16, kBatch = kChunks < 4 ? kChunks : 4;
  const int thread = static_cast<int>(threadIdx.x % 128), first_row = thread / 8, chunk = thread % 8;
  if (affine.in_k) {
    float gamma[kVec], beta[kVec];
    load_floats<T, kVec>(affine.gamma.elements.v, gamma);
    load_floats<T, kVec>(affine.beta.elements.v, beta);
#pragma unroll
    for (int j0 = 0; j0 < kChunks; j0 += kBatch) {
      float x[kBatch][kVec];
#pragma unroll
      for (int j = 0; j < kBatch; ++j)
        load_floats<T, kVec>(reinterpret_cast<const T*>(a_rows + (first_row + 16 * (j0 + j)) * 128 + chunk * 16), x[j]);
#pragma unroll
      for (int j = 0; j < kBatch; ++j) {
        const int r = first_row + 16 * (j0 + j);
        const float scale = inv_std[r], shift = -mean[r] * inv_std[r];
#pragma unroll
        for (int e = 0; e < kVec; ++e) x[j][e] = fmaf(fmaf(x[j][e], scale, shift), gamma[e], beta[e]);
        store_floats<T, kVec>(reinterpret_cast<T*>(a_rows + r * 128 + chunk * 16), x[j]);
      }
    }
  }
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

// Waits for slice `slice` to land (its stage's "full" barrier, phase `phase`), normalises this
// warpgroup's rows of it (a_rows) with `affine`, then starts loading the next slice's gamma and
// beta, which land under a wgmma.
template <class ALoad>
__device__ __forceinline__ void normalise_stage(const ALoad& a_load, SliceAffine& affine, unsigned long long* full,
                                                unsigned phase, unsigned char* a_rows, const float* mean,
                                                const float* inv_std, long long k, int slice, int end_slice) {
  kt::hopper::barrier_wait(full, phase);
  normalise_slice(affine, a_rows, mean, inv_std);
  if (slice + 1 < end_slice) affine = load_affine(a_load, k, slice + 1);
}

// Barrier of one consumer warpgroup (ids 2 and up; 1 is consumers_sync).
__device__ __forceinline__ void warpgroup_sync(int consumer) {
  asm volatile("bar.sync %0, 128;" ::"r"(2 + consumer) : "memory");
}

// The ring of shared-memory stages and its mbarriers: one per block, which its producer fills and
// its consumers drain for every tile of every GEMM the kernel runs (ffn runs two in sequence on
// one ring). stage_tile[s] is, with a ticket (TileSchedule), the tile whose first slice stage s
// holds, or a number past the last tile once there are none left (tickets take no clusters).
struct Ring {
  unsigned char* a_tiles;
  unsigned char* b_tiles;
  unsigned long long* full;
  unsigned long long* empty;
  long long* stage_tile;
};

// Where a GEMM's tiles come from and what finishing one does. Without a ticket, the block takes
// Operands' tile and every tile_step-th after it. With one, the producer takes the next tile from
// the counter (an atomic add) until there are none, and hands it to the consumers with its first
// slice, so that tiles start in the order taken however the blocks are scheduled. With
// done_per_row, each finished tile of D (stored, and fenced for TMA loads) adds 1 to its tile
// row's count, for whoever reads D as the A of a later GEMM (ReadyRowsA).
struct TileSchedule {
  unsigned* ticket = nullptr;
  unsigned* done_per_row = nullptr;
};

// Sets up the block's ring: the stages in dynamic shared memory (128-byte swizzled tiles start on
// 1024-byte boundaries; launch.shared_bytes has the slack) and the barriers, initialised by
// thread 0 before every thread of the block (of the cluster) goes on.
__device__ __forceinline__ Ring make_ring() {
  extern __shared__ unsigned char shared_raw[];
  unsigned char* shared = reinterpret_cast<unsigned char*>((reinterpret_cast<unsigned long long>(shared_raw) + 1023) & ~1023ull);
  __shared__ __align__(8) unsigned long long full[kStages], empty[kStages];
  __shared__ long long stage_tile[kStages];
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      barrier_init(&full[s], 1);
      barrier_init(&empty[s], kClusterM * kConsumers * 4);  // one arrival per consumer warp of the cluster
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  if constexpr (kClusterM > 1)
    kt::hopper::cluster_sync();
  else
    __syncthreads();
  return Ring{shared, shared + kStages * kATileBytes, full, empty, stage_tile};
}

// A consumer warp is done reading stage `stage` (wait_group is warp-wide): lane 0 releases it
// to the producer of every block of the cluster, which all load into it.
__device__ __forceinline__ void release_stage(const Ring& ring, int stage, unsigned rank, int lane) {
  if (lane != 0) return;
  if constexpr (kClusterM == 1)
    barrier_arrive(&ring.empty[stage]);
  else
    for (unsigned block = 0; block < kClusterM; ++block)
      if (block == rank)
        barrier_arrive(&ring.empty[stage]);
      else
        kt::hopper::barrier_arrive_in_block(&ring.empty[stage], block);
}

// The tiles of one GEMM, as the producer and the consumers both walk them: tiles are counted
// per cluster (cluster tile t covers tile rows kClusterM * tm .. + kClusterM - 1 of tile column
// tn, block `rank` of the cluster taking row kClusterM * tm + rank).
struct TileWalk {
  long long tiles_n, cluster_rows, tiles, first, end, step;
  unsigned rank;

  __device__ __forceinline__ TileWalk(const Operands& o) {
    const long long tiles_m = (o.m + BM - 1) / BM;
    tiles_n = (o.n + BN - 1) / BN;
    cluster_rows = (tiles_m + kClusterM - 1) / kClusterM;
    tiles = cluster_rows * tiles_n;
    rank = kClusterM > 1 ? kt::hopper::cluster_rank() : 0;
    first = o.tile / kClusterM;
    end = o.tile_step == 0 ? min(first + 1, tiles) : tiles;
    step = o.tile_step == 0 ? 1 : o.tile_step / kClusterM;
  }
  __device__ __forceinline__ void coordinates(long long t, long long& tile_m, long long& tile_n) const {
    tile_coordinates(t, cluster_rows, tiles_n, rank, tile_m, tile_n);
  }
};

// The producer (one thread): loads the slices of every tile of this GEMM into the ring, from
// `stage` and `phase` on (left where the next GEMM on the ring starts).
template <class ALoad>
__device__ __forceinline__ void produce(const Operands& o, const ALoad& a_load, const RowStatistics& statistics,
                                        const TensorMap& tma_a, const TensorMap& tma_b, TileSchedule schedule,
                                        const Ring& ring, int& stage, unsigned& phase) {
  const TileWalk walk(o);
  int first_slice, end_slice;
  split_slices(static_cast<int>((o.k + BK - 1) / BK), first_slice, end_slice);
  const bool ticketed = schedule.ticket != nullptr;
  const long long end = ticketed ? walk.tiles : walk.end;
  for (long long t = ticketed ? static_cast<long long>(atomicAdd(schedule.ticket, 1u)) : walk.first; t < end;
       t = ticketed ? static_cast<long long>(atomicAdd(schedule.ticket, 1u)) : t + walk.step) {
    long long tile_m, tile_n;
    walk.coordinates(t, tile_m, tile_n);
    if constexpr (ALoad::kWaitsForRows)
      if (tile_m * BM < o.m) a_load.wait_rows(statistics, tile_m);
    for (int slice = first_slice; slice < end_slice; ++slice) {
      barrier_wait(&ring.empty[stage], phase ^ 1);  // a fresh barrier counts as released
      if (slice == first_slice) ring.stage_tile[stage] = t;
      // The whole B slice arrives here: this block's half and its partner's multicast.
      barrier_expect_bytes(&ring.full[stage], kATileBytes + kBTileBytes);
      tma_load(ring.a_tiles + stage * kATileBytes, &tma_a, slice * BK, static_cast<int>(o.a_row0 + tile_m * BM),
               &ring.full[stage]);
      const int b_row = static_cast<int>(o.b_row0 + tile_n * BN) + static_cast<int>(walk.rank) * kBRowsPerBlock;
      unsigned char* b_part = ring.b_tiles + stage * kBTileBytes + walk.rank * kBRowsPerBlock * 128;
      if constexpr (kClusterM == 1)
        tma_load(b_part, &tma_b, slice * BK, b_row, &ring.full[stage]);
      else
        kt::hopper::tma_load_multicast(b_part, &tma_b, slice * BK, b_row, &ring.full[stage], (1u << kClusterM) - 1);
      advance(stage, phase);
    }
  }
  if (ticketed) {  // no tiles left: a stage with no data that says so
    barrier_wait(&ring.empty[stage], phase ^ 1);
    ring.stage_tile[stage] = walk.tiles;
    barrier_arrive(&ring.full[stage]);
    advance(stage, phase);
  }
}

// The consumer warpgroups: compute every tile of this GEMM from the ring, from `stage` and
// `phase` on, and store it (or, with split-K, add it into the workspace).
template <class ALoad, int kEpi>
__device__ __forceinline__ void consume(const Operands& o, const ALoad& a_load, const RowStatistics& statistics,
                                        TileSchedule schedule, const Ring& ring, float* __restrict__ workspace,
                                        int& stage, unsigned& phase) {
  constexpr bool kNorm = ALoad::kNormalises;
  const long long m = o.m, n = o.n, k = o.k;
  const TileWalk walk(o);
  int first_slice, end_slice;
  split_slices(static_cast<int>((k + BK - 1) / BK), first_slice, end_slice);
  const bool ticketed = schedule.ticket != nullptr;
  const int consumer = threadIdx.x / 128 - 1;
  const int lane = threadIdx.x % 32, warp = (threadIdx.x % 128) / 32;
  const float alpha = o.alpha, beta = o.beta;
  // The LayerNorm of A: this warpgroup's row statistics for the tile being computed.
  __shared__ float row_mean[kNorm ? kConsumers : 1][kNorm ? kRowsPerConsumer : 1];
  __shared__ float row_inv_std[kNorm ? kConsumers : 1][kNorm ? kRowsPerConsumer : 1];
  SliceAffine affine;  // gamma and beta of the next slice to normalise
  for (long long t = walk.first;; t += walk.step) {
    if (ticketed) {  // the tile comes with its first slice
      barrier_wait(&ring.full[stage], phase);
      t = ring.stage_tile[stage];
      if (t >= walk.tiles) {  // the producer's "no tiles left": released like a slice, for the next GEMM
        if (lane == 0) barrier_arrive(&ring.empty[stage]);
        advance(stage, phase);
        return;
      }
    } else if (t >= walk.end) {
      return;
    }
    long long tile_m, tile_n;
    walk.coordinates(t, tile_m, tile_n);
    float acc[kMTiles][BN / 2];
#pragma unroll
    for (int i = 0; i < kMTiles; ++i)
#pragma unroll
      for (int j = 0; j < BN / 2; ++j) acc[i][j] = 0.f;

    if constexpr (kNorm) {
      const long long own_rows = tile_m * BM + consumer * kRowsPerConsumer;
      if (threadIdx.x % 128 == 0 && tile_m * BM < m) statistics.wait(tile_m);
      warpgroup_sync(consumer);
      for (int r = static_cast<int>(threadIdx.x % 128); r < kRowsPerConsumer; r += 128) {
        row_mean[consumer][r] = own_rows + r < m ? statistics.mean(own_rows + r) : 0.f;
        row_inv_std[consumer][r] = own_rows + r < m ? statistics.inv_std(own_rows + r) : 0.f;
      }
      warpgroup_sync(consumer);
      if (first_slice < end_slice) {
        affine = load_affine(a_load, k, first_slice);
        normalise_stage(a_load, affine, &ring.full[stage], phase,
                        ring.a_tiles + stage * kATileBytes + consumer * kRowsPerConsumer * 128, row_mean[consumer],
                        row_inv_std[consumer], k, first_slice, end_slice);
        warpgroup_sync(consumer);
      }
    }

    int previous_stage = stage;  // the stage of the slice whose wgmma may still run
    for (int slice = first_slice; slice < end_slice; ++slice) {
      if constexpr (!kNorm) barrier_wait(&ring.full[stage], phase);  // (normalised slices were waited for)
      asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
      const unsigned char* a_stage = ring.a_tiles + stage * kATileBytes + consumer * kRowsPerConsumer * 128;
      const unsigned char* b_stage = ring.b_tiles + stage * kBTileBytes;
#pragma unroll
      for (int step = 0; step < kSteps; ++step) {
#pragma unroll
        for (int i = 0; i < kMTiles; ++i)
          kt::wgmma::mma_async<BN>(acc[i], tile_descriptor(a_stage + i * 64 * 128 + step * 32),
                                   tile_descriptor(b_stage + step * 32));
      }
      asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
      if constexpr (kNorm) {  // under this slice's wgmma: the next slice
        if (slice + 1 < end_slice) {
          int next_stage = stage;
          unsigned next_phase = phase;
          advance(next_stage, next_phase);
          normalise_stage(a_load, affine, &ring.full[next_stage], next_phase,
                          ring.a_tiles + next_stage * kATileBytes + consumer * kRowsPerConsumer * 128,
                          row_mean[consumer], row_inv_std[consumer], k, slice + 1, end_slice);
        }
      }
      if constexpr (kNorm) {
        asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
        warpgroup_sync(consumer);  // the next slice is normalised by all
        release_stage(ring, stage, walk.rank, lane);
      } else {
        // One slice's wgmma stays in flight while the next is issued, so the tensor cores do
        // not wait for this warpgroup between slices; the slice before it is done and released.
        asm volatile("wgmma.wait_group.sync.aligned 1;" ::: "memory");
        if (slice > first_slice) release_stage(ring, previous_stage, walk.rank, lane);
        previous_stage = stage;
      }
      advance(stage, phase);
    }
    if constexpr (!kNorm) {
      asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
      if (end_slice > first_slice) release_stage(ring, previous_stage, walk.rank, lane);
    }

    const long long row_base = tile_m * BM + consumer * kRowsPerConsumer + warp * 16 + lane / 4;
    const long long col_base = tile_n * BN + (lane % 4) * 2;
    if constexpr (kSplitK == 1) {
      finish_pairs<kStoreD, kEpi>(acc, row_base, col_base, m, n, o.d, o.c, o.bias, alpha, beta, workspace);
    } else {
      finish_pairs<kAddToWorkspace, kEpi>(acc, row_base, col_base, m, n, o.d, o.c, o.bias, alpha, beta, workspace);
      __threadfence();  // this block's sums are visible before it is counted
      consumers_sync();
      __shared__ unsigned last_split;
      unsigned* counters = reinterpret_cast<unsigned*>(workspace + m * n);
      if (threadIdx.x == 128) last_split = atomicAdd(counters + t, 1u) == kSplitK - 1;
      consumers_sync();
      if (last_split) {
        __threadfence();
        finish_pairs<kStoreWorkspaceSums, kEpi>(acc, row_base, col_base, m, n, o.d, o.c, o.bias, alpha, beta, workspace);
        if (threadIdx.x == 128) counters[t] = 0;
      }
    }
    if (schedule.done_per_row != nullptr) {  // the tile is visible, to TMA too, before it is counted
      kt::fence_async_proxy_global();
      __threadfence();
      consumers_sync();
      if (threadIdx.x == 128) atomicAdd(schedule.done_per_row + tile_m, 1u);
    }
  }
}

// One GEMM by the whole block: warpgroup 0 produces, the others consume (registers moved to
// them), on a ring of its own. kEpi: the problem's epilogue, or the one a kernel of two GEMMs
// gives each (ffn).
template <class ALoad, int kEpi = kEpilogue>
__device__ __forceinline__ void wgmma_gemm(const Operands& o, const ALoad& a_load, const TensorMap* tma_a,
                                           const TensorMap* tma_b, float* __restrict__ workspace,
                                           TileSchedule schedule = {}) {
  static_assert(!ALoad::kTakesStatistics || sizeof(T) == 2, "the LayerNorm of A takes fp16 or bf16 slices");
  const Ring ring = make_ring();
  const RowStatistics statistics(ALoad::kTakesStatistics ? a_load.statistics : nullptr, o.m, BM);
  if constexpr (ALoad::kTakesStatistics)
    statistics.template take_jobs<kThreads>(o.a, o.k, a_load.epsilon, a_load.gamma, a_load.beta, a_load.normalised);
  int stage = 0;
  unsigned phase = 0;
  if (threadIdx.x / 128 == 0) {
#if KT_CONSUMERS >= 2
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
#endif
    if (threadIdx.x == 0) produce(o, a_load, statistics, *tma_a, *tma_b, schedule, ring, stage, phase);
    if constexpr (kClusterM > 1) kt::hopper::cluster_sync();
    return;
  }
#if KT_CONSUMERS == 2
  asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");  // 2 x 128 x 232 + 128 x 40 = 64,512 of 65,536
#elif KT_CONSUMERS == 3
  asm volatile("setmaxnreg.inc.sync.aligned.u32 152;");  // 3 x 128 x 152 + 128 x 40 = 63,488 of 65,536
#endif
  consume<ALoad, kEpi>(o, a_load, statistics, schedule, ring, workspace, stage, phase);
  if constexpr (ALoad::kTakesStatistics) {  // this block waits for no more statistics
    consumers_sync();
    if (threadIdx.x == 128) statistics.counters.finish_block();
  }
  if constexpr (kClusterM > 1) kt::hopper::cluster_sync();
}

}  // namespace kt::gemm
