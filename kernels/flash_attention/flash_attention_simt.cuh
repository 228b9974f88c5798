// Flash attention, portable path: one source for NVIDIA (NVRTC) and AMD (hiprtc, wave64 and
// wave32) GPUs; fp32, fp16 or bf16, any head_dim that is a multiple of 8 up to 256, every
// product on the FMA units in fp32. No PTX, no asynchronous copies: only what
// kernels/common/gpu_portable.cuh makes portable.
//
// A block takes KT_BLOCK_Q query rows of one head (blockIdx.y) of one sequence (blockIdx.z).
// Each row belongs to a group of KT_THREADS_PER_ROW consecutive lanes, and each thread holds
// KT_ROWS_PER_THREAD rows (group g: rows g, g + groups, ...), so a block has
// KT_BLOCK_Q / KT_ROWS_PER_THREAD * KT_THREADS_PER_ROW threads. The head is cut into 4-column
// chunks dealt round-robin over the group's lanes: lane l owns chunks l, l + group, ... (the
// last round short when D / 4 is not a multiple of the group), and keeps its slice of each of
// its rows of Q (times scale·log2 e, so the scores come out in base 2) and of O in registers.
// Keys and values stream through shared memory KT_BLOCK_KV rows at a time, converted to fp32
// once when stored, as every row of the block reads each of them. For each block of keys a
// thread sums q·k over its chunks for every key and row, and the group's lanes add up their
// partial sums with butterfly shuffles; a butterfly leaves the same bits on every lane, so each
// lane runs the whole online softmax of its rows itself (running maximum and sum, no further
// exchange, not even at the end) and adds P·V for its own chunks. Holding several rows per
// thread reuses each 16-byte shared read of K or V for as many rows: with one row per thread
// the loop is bound by shared-memory reads rather than by FMAs (rows_per_thread is tuned). The
// scores of a block of keys stay in registers, so KT_BLOCK_KV is small (16 or 32); the search
// spaces bound the registers the tiles take (simt_registers).
// While a block of keys is being used, the next one is already loaded from global memory into
// registers (raw, unconverted) and only stored to shared memory after the block's barrier: the
// portable stand-in for cp.async stages.
// Shared rows are not padded: at any moment all groups of a warp read the same key (one
// broadcast) and a group's lanes consecutive 16-byte chunks of it, so no two lanes read
// different words of one bank; each thread stores its 16 or 32 bytes next to its neighbours'.
// Every shuffle stays inside a group of at most 32 lanes, which lies in one warp (NVIDIA) or
// wavefront (AMD: 64 lanes on CDNA, 32 on RDNA) either way.
// Rows past seq_q compute on zeros with the others (the shuffles need every lane) and store
// nothing; keys past seq_kv are zeros in shared memory (0 · garbage could be NaN) and masked.
// Causal launches run the query blocks that see the most keys first.
//
// Defines read here: KT_BLOCK_Q, KT_THREADS_PER_ROW, KT_ROWS_PER_THREAD; and through
// flash_attention.cu's T, D, BKV and kCausal: KT_T, KT_DIM_HEAD_DIM, KT_BLOCK_KV, KT_DIM_CAUSAL.
#pragma once

namespace kt::attention {

constexpr int BQ = KT_BLOCK_Q, kGroup = KT_THREADS_PER_ROW, kRowsPerThread = KT_ROWS_PER_THREAD;
constexpr int kGroups = BQ / kRowsPerThread;  // lane groups of a block, one per row of each round
constexpr int kThreads = kGroups * kGroup;
constexpr int kChunks = D / 4;                           // 4-column chunks of a head row
constexpr int kSlots = (kChunks + kGroup - 1) / kGroup;  // chunks per lane
constexpr bool kEvenSlots = kChunks % kGroup == 0;       // else some lanes' last slot is empty
constexpr int kVec = 16 / static_cast<int>(sizeof(T));   // elements per 16-byte global load
constexpr int kLoadsPerRow = D / kVec;
constexpr int kTileLoads = BKV * kLoadsPerRow;  // 16-byte loads of one block of keys (or values)
constexpr int kLoadsPerThread = (kTileLoads + kThreads - 1) / kThreads;
static_assert(D % 8 == 0 && D >= 8 && D <= 256, "head_dim a multiple of 8 up to 256");
static_assert(kGroup >= 1 && kGroup <= 32 && (kGroup & (kGroup - 1)) == 0,
              "a power-of-two group of lanes inside one warp or wavefront");
static_assert(BQ % kRowsPerThread == 0 && kThreads <= 1024, "whole rows per thread, a launchable block");
static_assert(D % kVec == 0, "whole 16-byte loads per row");

using Chunk = kt::Vector<float, 4>;
using Raw = kt::Packed<T, kVec>;

// +inf (NVRTC has no <cmath> INFINITY).
__device__ __forceinline__ float infinity() { return __int_as_float(0x7f800000); }

// Whether this lane owns a chunk in slot s (only the last slot can be empty, and only when the
// group does not divide the chunks).
__device__ __forceinline__ bool owns_slot(int s, int lane) {
  return kEvenSlots || s + 1 < kSlots || (kSlots - 1) * kGroup + lane < kChunks;
}

// The chunk the products of slot s read. A lane with no chunk there reads the row's last one
// instead of branching around the slot (branches in the unrolled loops cost AMD's compiler
// hundreds of registers): its Q there is 0, so its partial scores gain nothing, and what it
// adds to its O there is never stored.
__device__ __forceinline__ int chunk_of(int s, int lane) {
  const int chunk = s * kGroup + lane;
  return kEvenSlots || chunk < kChunks ? chunk : kChunks - 1;
}

// One block of keys or values from global memory: this thread's 16-byte loads, kept raw until
// stored, zeros for rows past `rows`.
struct TileFetch {
  Raw part[kLoadsPerThread];

  __device__ __forceinline__ void load(const T* matrix, long long row0, long long rows) {
#pragma unroll
    for (int i = 0; i < kLoadsPerThread; ++i) {
      const int index = i * kThreads + static_cast<int>(threadIdx.x);
      const int r = index / kLoadsPerRow, col = index % kLoadsPerRow * kVec;
      if ((kTileLoads % kThreads == 0 || index < kTileLoads) && row0 + r < rows) {
        part[i].raw = *reinterpret_cast<const decltype(part[i].raw)*>(matrix + (row0 + r) * D + col);
      } else {
#pragma unroll
        for (int e = 0; e < kVec; ++e) part[i].elements.v[e] = T{};  // +0 in every type
      }
    }
  }

  // Into a [BKV][D] fp32 tile.
  __device__ __forceinline__ void store(float* tile) const {
#pragma unroll
    for (int i = 0; i < kLoadsPerThread; ++i) {
      const int index = i * kThreads + static_cast<int>(threadIdx.x);
      if (kTileLoads % kThreads != 0 && index >= kTileLoads) continue;
      float x[kVec];
#pragma unroll
      for (int e = 0; e < kVec; ++e) x[e] = kt::to_float(part[i].elements.v[e]);
      float* out = tile + index * kVec;  // rows are unpadded: load `index` is at index * kVec
#pragma unroll
      for (int e = 0; e < kVec; e += 4)
        *reinterpret_cast<Chunk*>(out + e) = Chunk{{x[e], x[e + 1], x[e + 2], x[e + 3]}};
    }
  }
};

}  // namespace kt::attention

extern "C" __global__ void __launch_bounds__(kt::attention::kThreads)
    KT_ATTENTION_ENTRY(const kt::attention::T* __restrict__ q, const kt::attention::T* __restrict__ k,
                       const kt::attention::T* __restrict__ v, kt::attention::T* __restrict__ o,
                       float* __restrict__ lse, const float* __restrict__ scale KT_ATTENTION_MASK_TENSOR, long long,
                       long long heads, long long kv_heads, long long seq_q, long long seq_kv, long long,
                       long long KT_ATTENTION_MASK_DIMS) {
  using namespace kt::attention;
  KT_ATTENTION_MASK;
  extern __shared__ Chunk shared_chunks[];  // 16-byte aligned by its type
  float* k_tile = reinterpret_cast<float*>(shared_chunks);  // [BKV][D]
  float* v_tile = k_tile + BKV * D;  // [BKV][D]

  const Lengths len{heads, kv_heads == 0 ? heads : kv_heads, seq_q, seq_kv};
  const long long grid_x = gridDim.x, block_x = blockIdx.x;
  const long long q_block = kCausal ? grid_x - 1 - block_x : block_x;
  const long long head = blockIdx.y, batch = blockIdx.z;
  const long long kv_head = head / (len.heads / len.kv_heads);
  const long long i0 = q_block * BQ;
  const long long bh = batch * heads + head;
  const T* k_head = k + (batch * len.kv_heads + kv_head) * seq_kv * D;
  const T* v_head = v + (batch * len.kv_heads + kv_head) * seq_kv * D;
  const int lane = static_cast<int>(threadIdx.x) % kGroup, group = static_cast<int>(threadIdx.x) / kGroup;

  // Keys the block's last row sees bound the loop; blocks of keys the first row sees in full
  // need no mask (the first row sees the fewest).
  const long long last_row = (i0 + BQ < seq_q ? i0 + BQ : seq_q) - 1;
  const auto keys = mask.key_blocks(head, i0, static_cast<int>((len.keys_visible(last_row) + BKV - 1) / BKV),
                                    reinterpret_cast<int*>(v_tile + BKV * D));
  const int kv_blocks = keys.count();
  const long long unmasked = len.keys_visible(i0);

  TileFetch k_fetch, v_fetch;
  if (kv_blocks > 0) {
    k_fetch.load(k_head, keys.start(0), seq_kv);
    v_fetch.load(v_head, keys.start(0), seq_kv);
  }

  const float scale_log2 = 1.4426950408889634f * *scale;
  float q_part[kRowsPerThread][kSlots][4], out[kRowsPerThread][kSlots][4];
  float row_max[kRowsPerThread], row_sum[kRowsPerThread];
  long long visible[kRowsPerThread];  // keys each row sees
#pragma unroll
  for (int r = 0; r < kRowsPerThread; ++r) {
    const long long row = i0 + group + r * kGroups;
    visible[r] = len.keys_visible(row);
    row_max[r] = -infinity();
    row_sum[r] = 0.f;
#pragma unroll
    for (int s = 0; s < kSlots; ++s) {
      float x[4] = {0.f, 0.f, 0.f, 0.f};
      if (row < seq_q && owns_slot(s, lane)) kt::load_floats<T, 4>(q + (bh * seq_q + row) * D + (s * kGroup + lane) * 4, x);
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        q_part[r][s][e] = x[e] * scale_log2;
        out[r][s][e] = 0.f;
      }
    }
  }

  for (int j = 0; j < kv_blocks; ++j) {
    if (j > 0) __syncthreads();  // every thread is done with the previous block's tiles
    k_fetch.store(k_tile);
    v_fetch.store(v_tile);
    __syncthreads();
    const long long kv0 = keys.start(j);
    if (j + 1 < kv_blocks) {  // in flight while this block is used
      k_fetch.load(k_head, keys.start_after(j, kv0), seq_kv);
      v_fetch.load(v_head, keys.start_after(j, kv0), seq_kv);
    }

    // Partial scores over this lane's chunks: slots outside, keys inside, so the FMAs into
    // different keys' sums interleave and each 16-byte read of K serves every row.
    float score[kRowsPerThread][BKV];
#pragma unroll
    for (int r = 0; r < kRowsPerThread; ++r)
#pragma unroll
      for (int key = 0; key < BKV; ++key) score[r][key] = 0.f;
#pragma unroll
    for (int s = 0; s < kSlots; ++s) {
      const float* k_column = k_tile + chunk_of(s, lane) * 4;
#pragma unroll
      for (int key = 0; key < BKV; ++key) {
        const Chunk chunk = *reinterpret_cast<const Chunk*>(k_column + key * D);
#pragma unroll
        for (int r = 0; r < kRowsPerThread; ++r)
#pragma unroll
          for (int e = 0; e < 4; ++e) score[r][key] = fmaf(q_part[r][s][e], chunk.v[e], score[r][key]);
      }
    }

    const bool masked = kv0 + BKV > unmasked;  // the same for the whole block
#pragma unroll
    for (int r = 0; r < kRowsPerThread; ++r) {
#pragma unroll
      for (int key = 0; key < BKV; ++key) score[r][key] = kt::group_sum<kGroup>(score[r][key]);
      float block_max = -infinity();
#pragma unroll
      for (int key = 0; key < BKV; ++key) {
        if (masked && kv0 + key >= visible[r]) score[r][key] = -infinity();
        block_max = fmaxf(block_max, score[r][key]);
      }
      const float new_max = fmaxf(row_max[r], block_max);
      // A row that has seen no key yet keeps max -inf: exponents are taken from 0 then, and
      // its (zero) output is rescaled by 2^-inf = 0.
      const float base = new_max == -infinity() ? 0.f : new_max;
      const float rescale = kt::exp2_flush_subnormal(row_max[r] - base);
      row_max[r] = new_max;
      float sum = 0.f;
#pragma unroll
      for (int key = 0; key < BKV; ++key) {
        score[r][key] = kt::exp2_flush_subnormal(score[r][key] - base);
        sum += score[r][key];
      }
      row_sum[r] = row_sum[r] * rescale + sum;
#pragma unroll
      for (int s = 0; s < kSlots; ++s)
#pragma unroll
        for (int e = 0; e < 4; ++e) out[r][s][e] *= rescale;
    }

    // O += P·V over this lane's chunks, each 16-byte read of V serving every row.
#pragma unroll
    for (int s = 0; s < kSlots; ++s) {
      const float* v_column = v_tile + chunk_of(s, lane) * 4;
#pragma unroll
      for (int key = 0; key < BKV; ++key) {
        const Chunk chunk = *reinterpret_cast<const Chunk*>(v_column + key * D);
#pragma unroll
        for (int r = 0; r < kRowsPerThread; ++r)
#pragma unroll
          for (int e = 0; e < 4; ++e) out[r][s][e] = fmaf(score[r][key], chunk.v[e], out[r][s][e]);
      }
    }
  }

  // O = accumulators / row sum, lse = ln(sum of e^scores) = ln 2 · (max + log2 sum); every lane
  // of a group holds the same maximum and sum.
#pragma unroll
  for (int r = 0; r < kRowsPerThread; ++r) {
    const long long row = i0 + group + r * kGroups;
    if (row >= seq_q) continue;
    const bool empty_row = row_sum[r] == 0.f;  // the row sees no key (causal, seq_q > seq_kv; or a block mask)
    const float inverse = empty_row ? 0.f : 1.f / row_sum[r];
    T* o_row = o + (bh * seq_q + row) * D;
#pragma unroll
    for (int s = 0; s < kSlots; ++s) {
      if (!owns_slot(s, lane)) continue;
      float x[4];
#pragma unroll
      for (int e = 0; e < 4; ++e) x[e] = out[r][s][e] * inverse;
      kt::store_floats<T, 4>(o_row + (s * kGroup + lane) * 4, x);
    }
    if (lane == 0) lse[bh * seq_q + row] = empty_row ? infinity() : (row_max[r] + log2f(row_sum[r])) * 0.69314718055994531f;
  }
}
