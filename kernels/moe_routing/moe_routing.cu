// MoE routing on CUDA and HIP (kernels/moe_routing/moe_routing.hpp has the problem). Portable
// SIMT: any NVIDIA or AMD GPU, fp32/fp16/bf16.
//
// One launch of 2 x chunks blocks, each taking a ticket from a counter in the workspace, so a
// block waits only on blocks with lower tickets, which have started (no grid-wide barrier, any
// grid size). Tickets [0, chunks) route chunk `ticket` of KT_CHUNK_TOKENS tokens:
//   - a warp per token: its logits spread over the lanes, k rounds of a warp arg-max (the lower
//     expert index among equal logits), the softmax sums by shuffles; weights and expert ids
//     written;
//   - a warp per expert: the chunk's tokens that chose it, numbered in token order by ballots;
//   - the chunk's counts per expert published, then its position in every expert's prefix found
//     by a decoupled look-back over the earlier chunks (each thread one expert: it adds earlier
//     chunks' counts until it meets one whose inclusive prefix is published), so chunks do not
//     wait on each other in a chain;
//   - `rows` written as each choice's position in its expert (its row once the offsets are known).
// Tickets [chunks, 2 chunks) dispatch chunk `ticket - chunks`, once the last chunk's prefix (the
// totals) and their own chunk's positions are published: each expert's kept count and first row,
// the rows (-1 past the capacity), a warp per row copying x into `dispatched` in
// KT_VECTOR_BYTES accesses, and the unused rows of the chunk's share zeroed. The first of these
// blocks writes counts and dropped. The last block to finish resets the tickets and flags.
//
// experts, top_k and renormalize are compile-time (KT_DIM_*); tokens, hidden and the capacity
// are read at run time. With KT_RUNTIME_DIMS=1 (ktune::kernels' variants for expert counts
// nobody compiled) all three come from the arguments, KT_DIM_EXPERTS and KT_DIM_TOP_K being only
// the bounds that size the registers and shared arrays; loops still run to the bounds, unrolled,
// and skip what lies past the call's counts, so the per-token choices stay in registers.
#include "kernels/common/cuda_common.cuh"
#include "kernels/common/gpu_ballot.cuh"

namespace kt::moe {

using T = KT_T;
#ifndef KT_RUNTIME_DIMS
#define KT_RUNTIME_DIMS 0
#endif
// The counts compiled in: exact, or with KT_RUNTIME_DIMS the largest a variant takes.
constexpr int MAX_E = KT_DIM_EXPERTS, MAX_K = KT_DIM_TOP_K;
constexpr int WARPS = KT_WARPS, THREADS = WARPS * 32, CHUNK = KT_CHUNK_TOKENS;
constexpr int VEC = KT_VECTOR_BYTES / int(sizeof(T));  // elements per copy access
constexpr int PER_LANE = (MAX_E + 31) / 32;             // logits per lane of a token's warp
static_assert((KT_RUNTIME_DIMS || MAX_K <= MAX_E) && MAX_K <= 32 && PER_LANE <= 8,
              "up to 256 experts and 32 choices (a lane writes each choice)");

#if KT_RUNTIME_DIMS
// The call's counts, set by the kernel's first thread before the block's first barrier.
__shared__ int call_experts, call_top_k, call_renormalize;
__device__ __forceinline__ int experts_of_call() { return call_experts; }
__device__ __forceinline__ int top_k_of_call() { return call_top_k; }
__device__ __forceinline__ bool renormalize_of_call() { return call_renormalize != 0; }
#else
__device__ __forceinline__ constexpr int experts_of_call() { return MAX_E; }
__device__ __forceinline__ constexpr int top_k_of_call() { return MAX_K; }
__device__ __forceinline__ constexpr bool renormalize_of_call() { return KT_DIM_RENORMALIZE != 0; }
#endif

// The flags a chunk publishes, in turn: its count per expert, its inclusive prefix, and that its
// choices' positions are in `rows`.
constexpr int kNothing = 0, kCount = 1, kPrefix = 2, kRows = 3;

__device__ __forceinline__ float minus_infinity() { return __int_as_float(0xff800000); }

__device__ __forceinline__ int load_volatile(const int* p) { return *static_cast<const volatile int*>(p); }

// The workspace, in ints: the ticket and finish counters, a flag per chunk, then each chunk's
// count and inclusive prefix per expert.
struct Workspace {
  int* tickets;
  int* finished;
  int* flags;
  int* count;   // [chunks][experts]
  int* prefix;  // [chunks][experts]

  __device__ Workspace(int* w, long long chunks, int experts)
      : tickets(w), finished(w + 1), flags(w + 2), count(w + 2 + chunks), prefix(w + 2 + chunks + chunks * experts) {}
};

// A row of `hidden` elements copied, or zeroed (`from` null), by the lanes of a warp.
__device__ __forceinline__ void copy_row(T* to, const T* from, long long hidden, int lane) {
  using Chunk = Vector<T, VEC>;
  if (hidden % VEC == 0) {
    Chunk zero;
#pragma unroll
    for (int i = 0; i < VEC; ++i) zero.v[i] = from_float<T>(0.0f);
    for (long long i = (long long)lane * VEC; i < hidden; i += 32LL * VEC)
      *reinterpret_cast<Chunk*>(to + i) = from ? *reinterpret_cast<const Chunk*>(from + i) : zero;
  } else {  // a width the vector does not divide (a run-time-dims variant): element by element
    for (long long i = lane; i < hidden; i += 32) to[i] = from ? from[i] : from_float<T>(0.0f);
  }
}

// Routes the chunk's tokens [first, first + n): weights and expert ids, and each choice's
// expert and position among the chunk's tokens that chose that expert.
__device__ void route(const T* logits, float* weights, int* expert_ids, long long first, int n, int* choice,
                      int* position, int* count) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int E = experts_of_call(), K = top_k_of_call();
  for (int local = warp; local < n; local += WARPS) {
    const long long t = first + local;
    float value[PER_LANE];
#pragma unroll
    for (int i = 0; i < PER_LANE; ++i) {
      const int e = lane + 32 * i;
      value[i] = e < E ? to_float(logits[t * E + e]) : minus_infinity();
    }
    unsigned taken = 0;  // bit i: this lane's expert lane + 32 i is chosen
    float chosen[MAX_K];
    int chosen_expert[MAX_K];
#pragma unroll
    for (int k = 0; k < MAX_K; ++k) {
      if (k >= K) break;  // the call's top_k (warp-uniform); never taken without KT_RUNTIME_DIMS
      float best = minus_infinity();
      int best_expert = E;  // past every expert: loses every tie
#pragma unroll
      for (int i = 0; i < PER_LANE; ++i)
        if (!(taken >> i & 1u) && lane + 32 * i < E && (value[i] > best || best_expert == E)) {
          best = value[i];
          best_expert = lane + 32 * i;
        }
#pragma unroll
      for (int offset = 16; offset > 0; offset /= 2) {
        const float other = shfl_xor(best, offset);
        const int other_expert = static_cast<int>(shfl_xor(static_cast<float>(best_expert), offset));
        if (other > best || (other == best && other_expert < best_expert)) {
          best = other;
          best_expert = other_expert;
        }
      }
      chosen[k] = best;
      chosen_expert[k] = best_expert;
      if (best_expert % 32 == lane) taken |= 1u << (best_expert / 32);
    }
    const float max = chosen[0];
    float sum = 0.0f;
    if (renormalize_of_call()) {
#pragma unroll
      for (int k = 0; k < MAX_K; ++k)
        if (k < K) sum += expf(chosen[k] - max);
    } else {
#pragma unroll
      for (int i = 0; i < PER_LANE; ++i)
        if (lane + 32 * i < E) sum += expf(value[i] - max);
      sum = group_sum<32>(sum);
    }
    if (lane < K) {
      float mine = chosen[0];
      int expert = chosen_expert[0];
#pragma unroll
      for (int k = 1; k < MAX_K; ++k)
        if (lane == k) mine = chosen[k], expert = chosen_expert[k];
      weights[t * K + lane] = expf(mine - max) / sum;
      expert_ids[t * K + lane] = expert;
      choice[local * K + lane] = expert;
    }
  }
  __syncthreads();
  // A warp per expert numbers the chunk's tokens that chose it, 32 tokens per ballot.
  for (int e = warp; e < E; e += WARPS) {
    int running = 0;
    for (int base = 0; base < n; base += 32) {
      const int local = base + lane;
      int k_hit = -1;
      if (local < n)
#pragma unroll
        for (int k = 0; k < K; ++k)
          if (choice[local * K + k] == e) k_hit = k;
      const unsigned hits = lanes_ballot(k_hit >= 0);
      if (k_hit >= 0) position[local * K + k_hit] = running + __popc(hits & ((1u << lane) - 1u));
      running += __popc(hits);
    }
    if (lane == 0) count[e] = running;
  }
  __syncthreads();
}

}  // namespace kt::moe

extern "C" __global__ void __launch_bounds__(KT_WARPS * 32)
moe_routing_kernel(const KT_T* __restrict__ logits, const KT_T* __restrict__ x, float* __restrict__ weights,
                   int* __restrict__ expert_ids, int* __restrict__ rows, int* __restrict__ counts,
                   int* __restrict__ dropped, KT_T* __restrict__ dispatched, long long tokens, long long experts,
                   long long top_k, long long hidden, long long capacity_percent, long long renormalize,
                   int* __restrict__ workspace) {
  using namespace kt::moe;
#if KT_RUNTIME_DIMS
  const int E = (int)experts, K = (int)top_k;
#else
  (void)experts, (void)top_k, (void)renormalize;
  constexpr int E = MAX_E, K = MAX_K;
#endif
  const long long chunks = (tokens + CHUNK - 1) / CHUNK;
  Workspace w(workspace, chunks, E);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;

  __shared__ int ticket;
  __shared__ int choice[CHUNK * MAX_K], position[CHUNK * MAX_K];  // per choice of the chunk
  __shared__ int count[MAX_E], before[MAX_E];                     // per expert
  __shared__ int kept_before_lane[33];
  if (threadIdx.x == 0) {
#if KT_RUNTIME_DIMS
    call_experts = E, call_top_k = K, call_renormalize = (int)renormalize;  // for route()
#endif
    ticket = atomicAdd(w.tickets, 1);
  }
  __syncthreads();

  if (ticket < chunks) {
    const long long chunk = ticket, first = chunk * CHUNK;
    const int n = (int)min((long long)CHUNK, tokens - first);
    route(logits, weights, expert_ids, first, n, choice, position, count);
    // Publish the counts (the prefix too for the first chunk), then look back.
    for (int e = threadIdx.x; e < E; e += THREADS) {
      w.count[chunk * E + e] = count[e];
      if (chunk == 0) w.prefix[e] = count[e];
    }
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) atomicExch(w.flags + chunk, chunk == 0 ? kPrefix : kCount);
    for (int e = threadIdx.x; e < E; e += THREADS) {
      int sum = 0;
      for (long long j = chunk - 1; j >= 0; --j) {
        int flag;
        while ((flag = load_volatile(w.flags + j)) == kNothing) {
        }
        __threadfence();  // the flag before what it publishes
        if (flag >= kPrefix) {
          sum += load_volatile(w.prefix + j * E + e);
          break;
        }
        sum += load_volatile(w.count + j * E + e);
      }
      before[e] = sum;
      if (chunk > 0) w.prefix[chunk * E + e] = sum + count[e];
    }
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0 && chunk > 0) atomicExch(w.flags + chunk, kPrefix);
    for (int c = threadIdx.x; c < n * K; c += THREADS) rows[first * K + c] = before[choice[c]] + position[c];
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) atomicExch(w.flags + chunk, kRows);
  } else {
    const long long chunk = ticket - chunks, first = chunk * CHUNK;
    const int n = (int)min((long long)CHUNK, tokens - first);
    if (threadIdx.x == 0) {
      // The totals (the last chunk's prefix) and this chunk's positions.
      while (load_volatile(w.flags + chunks - 1) < kPrefix || load_volatile(w.flags + chunk) != kRows) {
      }
      __threadfence();
    }
    __syncthreads();
    const long long capacity =
        capacity_percent == 0 ? tokens
                              : max(1LL, min(tokens, (capacity_percent * tokens * K + 100LL * E - 1) / (100LL * E)));
    // Each expert's kept count (in count[]) and first row (in before[]): the lanes of warp 0
    // each sum a run of experts, thread 0 adds up the runs, each lane numbers its run's rows.
    if (warp == 0) {
      int kept = 0;
      for (int e = lane * PER_LANE; e < min(E, (lane + 1) * PER_LANE); ++e) {
        count[e] = (int)min((long long)load_volatile(w.prefix + (chunks - 1) * E + e), capacity);
        kept += count[e];
      }
      kept_before_lane[lane + 1] = kept;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      kept_before_lane[0] = 0;
      for (int i = 1; i <= 32; ++i) kept_before_lane[i] += kept_before_lane[i - 1];
    }
    __syncthreads();
    if (warp == 0) {
      int row = kept_before_lane[lane];
      for (int e = lane * PER_LANE; e < min(E, (lane + 1) * PER_LANE); ++e) {
        before[e] = row;
        row += count[e];
      }
    }
    __syncthreads();
    if (chunk == 0) {
      for (int e = threadIdx.x; e < E; e += THREADS) counts[e] = count[e];
      if (threadIdx.x == 0) {
        long long lost = 0;
        for (int e = 0; e < E; ++e) lost += load_volatile(w.prefix + (chunks - 1) * E + e) - count[e];
        *dropped = (int)lost;
      }
    }
    for (int c = threadIdx.x; c < n * K; c += THREADS) {
      const long long at = first * K + c;
      const int expert = load_volatile(expert_ids + at), p = load_volatile(rows + at);  // another block's
      const int row = p < capacity ? before[expert] + p : -1;
      rows[at] = row;
      choice[c] = row;
    }
    __syncthreads();
    for (int c = warp; c < n * K; c += WARPS)
      if (choice[c] >= 0) copy_row(dispatched + choice[c] * hidden, x + (first + c / K) * hidden, hidden, lane);
    // The rows of this chunk's share past the kept total are zero.
    const long long kept_total = kept_before_lane[32];
    for (long long r = max(first * K, kept_total) + warp; r < (first + n) * K; r += WARPS)
      copy_row(dispatched + r * hidden, nullptr, hidden, lane);
  }

  // The last block to finish resets the tickets and flags for the next launch (the counts and
  // prefixes are written before their flag is set, so they need no reset).
  __shared__ bool last_block;
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    last_block = atomicAdd(w.finished, 1) == (int)gridDim.x - 1;
  }
  __syncthreads();
  if (last_block) {
    for (long long j = threadIdx.x; j < chunks; j += THREADS) w.flags[j] = kNothing;
    if (threadIdx.x == 0) {
      *w.tickets = 0;
      *w.finished = 0;
    }
    __threadfence();
  }
}
