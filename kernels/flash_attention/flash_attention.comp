// Flash attention forward on Vulkan (kernels/flash_attention/flash_attention.hpp has the problem).
// The compile-time parameter "path" picks the code:
//   simt (default) - any device: the portable SIMT path of
//                    kernels/flash_attention/flash_attention_simt.cuh in GLSL, described below;
//   coopmat        - fp16 on devices with VK_NV_cooperative_matrix and 32-wide subgroups: both
//                    products on the tensor cores, the softmax through shared memory (after the
//                    simt code).
//
// simt: fp32, fp16 or bf16 in memory, every product and the softmax in fp32 on the FMA units;
// head_dim any multiple of 8 up to 256.
//
// A workgroup takes KT_BLOCK_Q query rows of one head (y) of one sequence (z). Each row belongs
// to a group of KT_THREADS_PER_ROW consecutive lanes of one subgroup, and each thread holds
// KT_ROWS_PER_THREAD rows (group g: rows g, g + groups, ...). The head is cut into 4-column
// chunks dealt round-robin over the group's lanes: lane l owns chunks l, l + group, ... (the
// last round short when D / 4 is not a multiple of the group), and keeps its slice of each of
// its rows of Q (times scale·log2 e, so the scores come out in base 2) and of O in registers.
// Keys and values stream through shared memory KT_BLOCK_KV rows at a time, converted to fp32
// once when stored, as every row of the workgroup reads each of them. For each block of keys a
// thread sums q·k over its chunks for every key and row, and the group's lanes add up their
// partial sums with butterfly shuffles; a butterfly leaves the same bits on every lane (float
// addition commutes), so each lane runs the whole online softmax of its rows itself and adds
// P·V for its own chunks, with no further exchange. Several rows per thread reuse each shared
// read of K or V for as many rows: with one row per thread the loop is bound by shared-memory
// reads rather than by FMAs. The scores of a block of keys stay in registers, so KT_BLOCK_KV is
// small (8 to 32); the search space bounds the registers the tiles take (simt_registers).
// While a block of keys is being used, the next one is already loaded from global memory into
// registers as raw 16-byte words and only converted and stored to shared memory after the
// block's barrier (Vulkan has no asynchronous copies to overlap it otherwise).
// head_dim, causal and every tunable are specialization constants: the driver compiles each
// pipeline with them known, so the loops below unroll and the register arrays have fixed sizes.
//
// Rows past seq_q compute on zeros with the others (the shuffles need every lane) and store
// nothing; keys past seq_kv are zeros in shared memory (0 · garbage could be NaN) and masked.
// Causal launches run the query blocks that see the most keys first.
#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#include "common/vulkan_common.glsl"
#if defined(KT_PATH_COOPMAT)
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_NV_cooperative_matrix : require
#endif

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;

// What both paths read: the head size and mask, the dims, the lse and scale buffers (bindings 4
// and 5) and the causal bound.
layout(constant_id = 8) const uint KT_DIM_HEAD_DIM = 128;
layout(constant_id = 9) const uint KT_DIM_CAUSAL = 0;

layout(std430, binding = 4) writeonly restrict buffer LseBuffer { float lse[]; };
layout(std430, binding = 5) readonly restrict buffer ScaleBuffer { float scale[]; };

layout(push_constant) uniform Dims {
  uint batch, heads, kv_heads, seq_q, seq_kv, head_dim, causal;
} dims;

#define NEG_INF uintBitsToFloat(0xff800000u)  // -inf (GLSL has no literal for it)

// Keys query row i sees (bottom-right causal: key j when j <= i + seq_kv - seq_q).
uint keys_visible(uint i) {
  if (KT_DIM_CAUSAL == 0) return dims.seq_kv;
  const int last = int(i) + int(dims.seq_kv) - int(dims.seq_q);
  return last < 0 ? 0u : min(uint(last) + 1u, dims.seq_kv);
}

#if !defined(KT_PATH_COOPMAT)

layout(constant_id = 3) const uint KT_BLOCK_Q = 64;
layout(constant_id = 4) const uint KT_BLOCK_KV = 16;
layout(constant_id = 5) const uint KT_THREADS_PER_ROW = 4;
layout(constant_id = 6) const uint KT_ROWS_PER_THREAD = 2;
layout(constant_id = 7) const uint KT_KEYS_UNROLLED = 16;

// Short names as macros: a `const` alias of a specialization constant would be the same SPIR-V
// id under a second OpName, hiding the KT_ name the backend matches.
#define D KT_DIM_HEAD_DIM
#define BQ KT_BLOCK_Q
#define BKV KT_BLOCK_KV
#define G KT_THREADS_PER_ROW
#define R KT_ROWS_PER_THREAD
#define KU KT_KEYS_UNROLLED  // divides BKV
const uint GROUPS = BQ / R;       // lane groups of a workgroup, one per row of each round
const uint THREADS = GROUPS * G;  // = launch.block_x
const uint CHUNKS = D / 4;                 // 4-column chunks of a head row
const uint SLOTS = (CHUNKS + G - 1) / G;   // chunks per lane
const bool EVEN_SLOTS = CHUNKS % G == 0;   // else some lanes' last slot is empty
#if defined(KT_PRECISION_FP32)
const uint VEC = 4;  // elements per 16-byte raw load
#else
const uint VEC = 8;
#endif
const uint LOADS_PER_ROW = D / VEC;  // whole: D is a multiple of 8
const uint TILE_LOADS = BKV * LOADS_PER_ROW;
const uint LOADS_PER_THREAD = (TILE_LOADS + THREADS - 1) / THREADS;

layout(std430, binding = 0) readonly restrict buffer QBuffer { KT_ELEM4 q4[]; };
// K and V are read as raw 16-byte words (8 elements of a 16-bit type), the widest load, and
// decoded when stored to shared memory. A row of either starts on 16 bytes since D % 8 == 0.
layout(std430, binding = 1) readonly restrict buffer KBuffer { uvec4 k_raw[]; };
layout(std430, binding = 2) readonly restrict buffer VBuffer { uvec4 v_raw[]; };
layout(std430, binding = 3) writeonly restrict buffer OBuffer { KT_ELEM4 o4[]; };

shared vec4 k_tile[BKV * CHUNKS];  // [BKV][D] fp32, rows unpadded: see the reads below
shared vec4 v_tile[BKV * CHUNKS];

// The next block of keys and values, this thread's 16-byte loads, kept raw until stored.
uvec4 k_fetch[LOADS_PER_THREAD], v_fetch[LOADS_PER_THREAD];

// Whether this lane owns a chunk in slot s (only the last slot can be empty).
bool owns_slot(uint s, uint lane) { return EVEN_SLOTS || s + 1 < SLOTS || (SLOTS - 1) * G + lane < CHUNKS; }

// The chunk the products of slot s read. A lane with no chunk there reads the row's last one
// instead of branching around the slot: its Q there is 0, so its partial scores gain nothing,
// and what it adds to its O there is never stored.
uint chunk_of(uint s, uint lane) {
  const uint chunk = s * G + lane;
  return EVEN_SLOTS || chunk < CHUNKS ? chunk : CHUNKS - 1;
}

// Four elements (h: the first or second four of a 16-bit type's eight) of a raw load as floats.
vec4 decode(uvec4 raw, uint h) {
#if defined(KT_PRECISION_FP16)
  const uvec2 w = h == 0 ? raw.xy : raw.zw;  // little endian: element 0 in the low half
  return vec4(unpackHalf2x16(w.x), unpackHalf2x16(w.y));
#elif defined(KT_PRECISION_BF16)
  const uvec2 w = h == 0 ? raw.xy : raw.zw;
  return uintBitsToFloat(uvec4(w.x << 16, w.x & 0xffff0000u, w.y << 16, w.y & 0xffff0000u));
#else
  return uintBitsToFloat(raw);
#endif
}

// Loads keys and values row0.. of a head (`head_load`: its first raw load) into registers;
// zeros (+0 in every type) past seq_kv. A block of rows is contiguous, so load `index` of the
// tile is at row0 * LOADS_PER_ROW + index, next to its neighbours' (coalesced).
void fetch_tiles(uint head_load, uint row0, uint tid) {
  [[unroll]] for (uint i = 0; i < LOADS_PER_THREAD; ++i) {
    const uint index = i * THREADS + tid;
    if (index < TILE_LOADS && row0 + index / LOADS_PER_ROW < dims.seq_kv) {
      k_fetch[i] = k_raw[head_load + row0 * LOADS_PER_ROW + index];
      v_fetch[i] = v_raw[head_load + row0 * LOADS_PER_ROW + index];
    } else {
      k_fetch[i] = uvec4(0u);
      v_fetch[i] = uvec4(0u);
    }
  }
}

// Into the [BKV][D] fp32 tiles: load `index` holds chunks index * VEC / 4 on.
void store_tiles(uint tid) {
  [[unroll]] for (uint i = 0; i < LOADS_PER_THREAD; ++i) {
    const uint index = i * THREADS + tid;
    if (index < TILE_LOADS) {
      [[unroll]] for (uint h = 0; h < VEC / 4; ++h) {
        k_tile[index * (VEC / 4) + h] = decode(k_fetch[i], h);
        v_tile[index * (VEC / 4) + h] = decode(v_fetch[i], h);
      }
    }
  }
}

// Sum over the group's G lanes (consecutive in the subgroup), the same bits on every lane.
float group_sum(float x) {
  [[unroll]] for (uint m = 1; m < G; m <<= 1) x += subgroupShuffleXor(x, m);
  return x;
}

void main() {
  // Lanes numbered through the subgroup, so that a group's lanes surely lie in one subgroup
  // (the space keeps the workgroup a whole number of subgroups and G <= subgroup size).
  const uint tid = gl_SubgroupID * gl_SubgroupSize + gl_SubgroupInvocationID;
  const uint lane = tid % G, group = tid / G;
  const uint seq_q = dims.seq_q, seq_kv = dims.seq_kv;
  const uint heads = dims.heads, kv_heads = dims.kv_heads == 0 ? dims.heads : dims.kv_heads;
  const uint q_block = KT_DIM_CAUSAL != 0 ? gl_NumWorkGroups.x - 1 - gl_WorkGroupID.x : gl_WorkGroupID.x;
  const uint head = gl_WorkGroupID.y, batch = gl_WorkGroupID.z;
  const uint kv_head = head / (heads / kv_heads);
  const uint i0 = q_block * BQ;
  const uint bh = batch * heads + head;
  const uint head_load = (batch * kv_heads + kv_head) * seq_kv * LOADS_PER_ROW;

  // Keys the workgroup's last row sees bound the loop; blocks of keys the first row sees in
  // full need no mask (the first row sees the fewest).
  const uint last_row = min(i0 + BQ, seq_q) - 1;
  const uint visible_last = keys_visible(last_row);
  const uint kv_blocks = (visible_last + BKV - 1) / BKV;
  const uint unmasked = keys_visible(i0);

  if (kv_blocks > 0) fetch_tiles(head_load, 0, tid);

  const float scale_log2 = 1.4426950408889634 * scale[0];
  vec4 q_part[R * SLOTS], acc[R * SLOTS];  // [row][slot]
  float row_max[R], row_sum[R];
  uint visible[R];  // keys each row sees
  [[unroll]] for (uint r = 0; r < R; ++r) {
    const uint row = i0 + group + r * GROUPS;
    visible[r] = keys_visible(row);
    row_max[r] = NEG_INF;
    row_sum[r] = 0.0;
    [[unroll]] for (uint s = 0; s < SLOTS; ++s) {
      vec4 x = vec4(0.0);
      if (row < seq_q && owns_slot(s, lane)) x = kt_load4(q4[(bh * seq_q + row) * CHUNKS + s * G + lane]);
      q_part[r * SLOTS + s] = x * scale_log2;
      acc[r * SLOTS + s] = vec4(0.0);
    }
  }

  for (uint j = 0; j < kv_blocks; ++j) {
    if (j > 0) barrier();  // every thread is done with the previous block's tiles
    store_tiles(tid);
    barrier();
    const uint kv0 = j * BKV;
    if (j + 1 < kv_blocks) fetch_tiles(head_load, kv0 + BKV, tid);  // in flight while this block is used

    // The block's keys in steps of KU (= BKV on GPUs: one step), each with its own online
    // softmax update. The step loop stays rolled: what is unrolled (and held in registers) is
    // KU keys, which bounds the code LLVM-based drivers such as lavapipe must compile (every
    // shared read or shuffle there becomes a loop over the SIMD lanes). Steps past the keys
    // the workgroup's last row sees are skipped.
    const uint block_keys = min(BKV, visible_last - kv0);
    [[dont_unroll]] for (uint k0 = 0; k0 < block_keys; k0 += KU) {
      // Partial scores over this lane's chunks: slots outside, keys inside, so the FMAs into
      // different keys' sums interleave and each read of K serves every row. All groups of a
      // subgroup read the same key at once (a broadcast) and a group's lanes consecutive
      // 16-byte chunks of it, so unpadded rows have no bank conflicts.
      float score[R * KU];  // [row][key]
      [[unroll]] for (uint i = 0; i < R * KU; ++i) score[i] = 0.0;
      [[unroll]] for (uint s = 0; s < SLOTS; ++s) {
        const uint column = chunk_of(s, lane);
        [[unroll]] for (uint key = 0; key < KU; ++key) {
          const vec4 kc = k_tile[(k0 + key) * CHUNKS + column];
          [[unroll]] for (uint r = 0; r < R; ++r) {
            const vec4 qc = q_part[r * SLOTS + s];
            float x = score[r * KU + key];
            x = fma(qc.x, kc.x, x);
            x = fma(qc.y, kc.y, x);
            x = fma(qc.z, kc.z, x);
            score[r * KU + key] = fma(qc.w, kc.w, x);
          }
        }
      }

      const uint step0 = kv0 + k0;
      const bool masked = step0 + KU > unmasked;  // the same for the whole workgroup
      [[unroll]] for (uint r = 0; r < R; ++r) {
        float step_max = NEG_INF;
        [[unroll]] for (uint key = 0; key < KU; ++key) {
          float x = group_sum(score[r * KU + key]);
          if (masked && step0 + key >= visible[r]) x = NEG_INF;
          score[r * KU + key] = x;
          step_max = max(step_max, x);
        }
        // A row that has seen no key yet keeps max -inf and sum 0; exp2 is never asked for
        // 2^-inf (not every implementation promises 0 for it): masked keys get 0 by select.
        const float new_max = max(row_max[r], step_max);
        const float rescale = row_max[r] == NEG_INF ? 0.0 : exp2(row_max[r] - new_max);
        row_max[r] = new_max;
        float sum = 0.0;
        [[unroll]] for (uint key = 0; key < KU; ++key) {
          const float x = score[r * KU + key];
          const float p = x == NEG_INF ? 0.0 : exp2(x - new_max);
          score[r * KU + key] = p;
          sum += p;
        }
        row_sum[r] = row_sum[r] * rescale + sum;
        [[unroll]] for (uint s = 0; s < SLOTS; ++s) acc[r * SLOTS + s] *= rescale;
      }

      // O += P·V over this lane's chunks, each read of V serving every row.
      [[unroll]] for (uint s = 0; s < SLOTS; ++s) {
        const uint column = chunk_of(s, lane);
        [[unroll]] for (uint key = 0; key < KU; ++key) {
          const vec4 vc = v_tile[(k0 + key) * CHUNKS + column];
          [[unroll]] for (uint r = 0; r < R; ++r) acc[r * SLOTS + s] = fma(vec4(score[r * KU + key]), vc, acc[r * SLOTS + s]);
        }
      }
    }
  }

  // O = accumulators / row sum, lse = ln(sum of e^scores) = ln 2 · (max + log2 sum); every
  // lane of a group holds the same maximum and sum. A row that sees no key (causal,
  // seq_q > seq_kv) gets O = 0 and lse = +inf.
  [[unroll]] for (uint r = 0; r < R; ++r) {
    const uint row = i0 + group + r * GROUPS;
    if (row >= seq_q) continue;
    const bool empty_row = row_sum[r] == 0.0;
    const float inverse = empty_row ? 0.0 : 1.0 / row_sum[r];
    [[unroll]] for (uint s = 0; s < SLOTS; ++s) {
      if (owns_slot(s, lane)) o4[(bh * seq_q + row) * CHUNKS + s * G + lane] = kt_store4(acc[r * SLOTS + s] * inverse);
    }
    if (lane == 0) {
      lse[bh * seq_q + row] = empty_row ? uintBitsToFloat(0x7f800000u) : (row_max[r] + log2(row_sum[r])) * 0.69314718055994531;
    }
  }
}

#else
// ---------------------------------------------------------------------------------------------
// coopmat: GL_NV_cooperative_matrix 16x16x16 (fp16 -> fp32), fp16, 32-wide subgroups, head_dim a
// multiple of 16 up to 128. A workgroup takes KT_BLOCK_Q = 16 * KT_WARPS query rows of one head,
// 16 per subgroup, whose Q stays in D / 16 A fragments; keys and values stream through shared
// memory KT_BLOCK_KV rows at a time (fp16, 16-byte copies, the next block in registers while the
// current one is used). Per block of keys a subgroup
//   1. computes S = Q·Kᵀ in BKV / 16 fp32 accumulators and stores them to its own scratch;
//   2. runs the online softmax there, two invocations per row (masking, the row's new maximum,
//      P = 2^(S·scale·log2 e - max) as fp16, the row's sum) and writes each row's rescale
//      factor across a 16x16 matrix;
//   3. divides its O accumulators by a matrix of each row's 1 / factor (matrix / matrix of one
//      type is component-wise in the extension: no assumption on which component is where),
//      then O += P·V.
// The end divides O by the row sums the same way and stores the rows below seq_q with their lse.

layout(constant_id = 3) const uint KT_BLOCK_Q = 64;
layout(constant_id = 4) const uint KT_BLOCK_KV = 32;
layout(constant_id = 10) const uint KT_WARPS = 4;

#define D KT_DIM_HEAD_DIM
#define BQ KT_BLOCK_Q
#define BKV KT_BLOCK_KV
const uint THREADS = KT_WARPS * 32;  // subgroups of 32 (a space constraint)
// Shared rows in 16-byte chunks, padded by one so that the rows a fragment load reads at once
// fall in distinct banks.
const uint ROW = D / 8 + 1;                                    // a row of Q, K or V (fp16)
const uint S_ROW = BKV / 4 + 1, P_ROW = BKV / 8 + 1;           // a row of S (fp32) and of P (fp16)
const uint SCRATCH = 16 * S_ROW + 16 * P_ROW + 64;             // per subgroup: S, P, a 16x16 fp32 matrix
const uint K_TILE = BKV * ROW;
shared uvec4 smem[2 * K_TILE + KT_WARPS * SCRATCH];  // K, V (Q first, before the loop), then the scratches
const uint CHUNKS = D / 8;                           // 16-byte chunks of a row
const uint LOADS = (BKV * CHUNKS + THREADS - 1) / THREADS;

layout(std430, binding = 0) readonly restrict buffer QBuffer { uvec4 q16[]; };
layout(std430, binding = 1) readonly restrict buffer KBuffer { uvec4 k16[]; };
layout(std430, binding = 2) readonly restrict buffer VBuffer { uvec4 v16[]; };
layout(std430, binding = 3) writeonly restrict buffer OBuffer { KT_ELEM o[]; };

uvec4 k_fetch[LOADS], v_fetch[LOADS];

// Rows [kv0, kv0 + BKV) of this head's K and V into registers (zeros past seq_kv).
void fetch_tiles(uint head_chunk, uint kv0) {
  [[unroll]] for (uint t = 0; t < LOADS; ++t) {
    const uint c = gl_LocalInvocationIndex + t * THREADS, row = kv0 + c / CHUNKS;
    const bool valid = c < BKV * CHUNKS && row < dims.seq_kv;
    k_fetch[t] = valid ? k16[head_chunk + row * CHUNKS + c % CHUNKS] : uvec4(0);
    v_fetch[t] = valid ? v16[head_chunk + row * CHUNKS + c % CHUNKS] : uvec4(0);
  }
}

void store_tiles() {
  [[unroll]] for (uint t = 0; t < LOADS; ++t) {
    const uint c = gl_LocalInvocationIndex + t * THREADS;
    if (c < BKV * CHUNKS) {
      smem[c / CHUNKS * ROW + c % CHUNKS] = k_fetch[t];
      smem[K_TILE + c / CHUNKS * ROW + c % CHUNKS] = v_fetch[t];
    }
  }
}

// A 16x16 fp32 matrix whose row r is `value` of row r's invocations (this one: row `r`,
// columns [8 half, 8 half + 8)), through the subgroup's scratch at `base`.
fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> row_matrix(uint base, uint r, uint half_, float value) {
  const uvec4 bits = floatBitsToUint(vec4(value));
  smem[base + r * 4 + half_ * 2] = bits;
  smem[base + r * 4 + half_ * 2 + 1] = bits;
  subgroupMemoryBarrierShared();
  subgroupBarrier();
  fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> m;
  coopMatLoadNV(m, smem, base, 4, false);
  subgroupBarrier();  // every invocation has loaded it before the scratch is written again
  return m;
}

void main() {
  const uint seq_q = dims.seq_q, seq_kv = dims.seq_kv;
  const uint heads = dims.heads, kv_heads = dims.kv_heads == 0 ? dims.heads : dims.kv_heads;
  const uint q_block = KT_DIM_CAUSAL != 0 ? gl_NumWorkGroups.x - 1 - gl_WorkGroupID.x : gl_WorkGroupID.x;
  const uint head = gl_WorkGroupID.y, batch = gl_WorkGroupID.z;
  const uint kv_head = head / (heads / kv_heads);
  const uint i0 = q_block * BQ, bh = batch * heads + head;
  const uint head_chunk = (batch * kv_heads + kv_head) * seq_kv * CHUNKS;
  const uint warp = gl_SubgroupID, lane = gl_SubgroupInvocationID;
  const uint scratch = 2 * K_TILE + warp * SCRATCH;  // S [16][S_ROW], P [16][P_ROW], a 16x16 matrix
  const uint p_base = scratch + 16 * S_ROW, m_base = p_base + 16 * P_ROW;
  const uint r = lane / 2, half_ = lane % 2;  // this invocation's row of the subgroup's 16 and half of it
  const uint row = i0 + warp * 16 + r;

  // Q rows [i0, i0 + BQ) into the K and V area and on into the scratches (zeros past seq_q; the
  // space keeps them within the shared memory), then each subgroup's 16 rows
  // into A fragments.
  for (uint c = gl_LocalInvocationIndex; c < BQ * CHUNKS; c += THREADS) {
    const uint q_row = i0 + c / CHUNKS;
    smem[c / CHUNKS * ROW + c % CHUNKS] = q_row < seq_q ? q16[(bh * seq_q + q_row) * CHUNKS + c % CHUNKS] : uvec4(0);
  }
  barrier();
  fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> q_frag[D / 16];
  [[unroll]] for (uint kk = 0; kk < D / 16; ++kk) coopMatLoadNV(q_frag[kk], smem, warp * 16 * ROW + kk * 2, ROW, false);

  const uint last_row = min(i0 + BQ, seq_q) - 1;
  const uint kv_blocks = (keys_visible(last_row) + BKV - 1) / BKV;
  const uint visible = keys_visible(row);
  const float scale_log2 = 1.4426950408889634 * scale[0];
  if (kv_blocks > 0) fetch_tiles(head_chunk, 0);
  // Without keys no loop barrier follows: every subgroup has its Q before the end writes the
  // scratches (where Q's rows may lie). kv_blocks is the workgroup's.
  if (kv_blocks == 0) barrier();

  fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> acc[D / 16];
  [[unroll]] for (uint t = 0; t < D / 16; ++t) acc[t] = fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>(0.0);
  float row_max = NEG_INF, row_sum = 0.0;  // the same bits in both invocations of a row

  for (uint j = 0; j < kv_blocks; ++j) {
    barrier();  // every subgroup is done with the previous block (and with Q's rows)
    store_tiles();
    barrier();
    const uint kv0 = j * BKV;
    if (j + 1 < kv_blocks) fetch_tiles(head_chunk, kv0 + BKV);  // in flight during the products

    // 1. S = Q·Kᵀ: K stored [key][head] is Kᵀ read column-major.
    [[unroll]] for (uint n = 0; n < BKV / 16; ++n) {
      fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> s = fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>(0.0);
      [[unroll]] for (uint kk = 0; kk < D / 16; ++kk) {
        fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> k_frag;
        coopMatLoadNV(k_frag, smem, n * 16 * ROW + kk * 2, ROW, true);
        s = coopMatMulAddNV(q_frag[kk], k_frag, s);
      }
      coopMatStoreNV(s, smem, scratch + n * 4, S_ROW, false);
    }
    subgroupMemoryBarrierShared();
    subgroupBarrier();

    // 2. The online softmax of row r over this invocation's half of the block's keys. A row
    //    that has seen no key keeps max -inf and sum 0; masked keys get 0 by select (exp2 of
    //    -inf is not promised 0 everywhere).
    float x[BKV / 2];
    float block_max = NEG_INF;
    [[unroll]] for (uint c = 0; c < BKV / 2; ++c) {
      const uint col = half_ * (BKV / 2) + c;
      const float s = uintBitsToFloat(smem[scratch + r * S_ROW + col / 4][col % 4]);
      x[c] = kv0 + col < visible ? s * scale_log2 : NEG_INF;
      block_max = max(block_max, x[c]);
    }
    block_max = max(block_max, subgroupShuffleXor(block_max, 1));
    const float new_max = max(row_max, block_max);
    const float rescale = row_max == NEG_INF ? 0.0 : exp2(row_max - new_max);
    float sum = 0.0;
    [[unroll]] for (uint c = 0; c < BKV / 2; c += 8) {
      vec4 p0, p1;
      [[unroll]] for (uint e = 0; e < 4; ++e) {
        p0[e] = x[c + e] == NEG_INF ? 0.0 : exp2(x[c + e] - new_max);
        p1[e] = x[c + 4 + e] == NEG_INF ? 0.0 : exp2(x[c + 4 + e] - new_max);
      }
      sum += p0.x + p0.y + p0.z + p0.w + p1.x + p1.y + p1.z + p1.w;
      smem[p_base + r * P_ROW + (half_ * (BKV / 2) + c) / 8] =
          uvec4(packHalf2x16(p0.xy), packHalf2x16(p0.zw), packHalf2x16(p1.xy), packHalf2x16(p1.zw));
    }
    row_sum = row_sum * rescale + (sum + subgroupShuffleXor(sum, 1));  // one sum, commuted alike
    row_max = new_max;

    // 3. O = O · rescale (per row) as O / (1 / rescale), then O += P·V (V stored [key][head]: B
    //    row-major). A rescale of 0 (a row's first keys, O still 0; or an underflow) divides by a
    //    huge finite number rather than by infinity, which Vulkan need not keep.
    const float divisor = rescale > 1.0e-30 ? 1.0 / rescale : 3.0e38;
    const fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> factor = row_matrix(m_base, r, half_, divisor);
    [[unroll]] for (uint t = 0; t < D / 16; ++t) acc[t] = acc[t] / factor;
    [[unroll]] for (uint kk = 0; kk < BKV / 16; ++kk) {
      fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> p_frag;
      coopMatLoadNV(p_frag, smem, p_base + kk * 2, P_ROW, false);
      [[unroll]] for (uint t = 0; t < D / 16; ++t) {
        fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> v_frag;
        coopMatLoadNV(v_frag, smem, K_TILE + kk * 16 * ROW + t * 2, ROW, false);
        acc[t] = coopMatMulAddNV(p_frag, v_frag, acc[t]);
      }
    }
  }

  // O = accumulators / row sum, lse = ln 2 · (max + log2 sum). A row that sees no key (causal,
  // seq_q > seq_kv) gets O = 0 and lse = +inf. Each 16x16 tile of O goes through the S scratch
  // to the rows below seq_q, 16 invocations on a row's 16 columns.
  const bool empty_row = row_sum == 0.0;
  const fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> sums = row_matrix(m_base, r, half_, empty_row ? 1.0 : row_sum);
  [[unroll]] for (uint t = 0; t < D / 16; ++t) {
    acc[t] = acc[t] / sums;
    coopMatStoreNV(acc[t], smem, scratch, S_ROW, false);
    subgroupMemoryBarrierShared();
    subgroupBarrier();
    [[unroll]] for (uint e = lane; e < 256; e += 32) {
      const uint out_row = i0 + warp * 16 + e / 16, col = t * 16 + e % 16;
      if (out_row < seq_q)
        o[(bh * seq_q + out_row) * D + col] = kt_store(uintBitsToFloat(smem[scratch + e / 16 * S_ROW + e % 16 / 4][e % 4]));
    }
    subgroupBarrier();  // every read done before the next tile overwrites the scratch
  }
  if (half_ == 0 && row < seq_q)
    lse[bh * seq_q + row] = empty_row ? uintBitsToFloat(0x7f800000u) : (row_max + log2(row_sum)) * 0.69314718055994531;
}
#endif
