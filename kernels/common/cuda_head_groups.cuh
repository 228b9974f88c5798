// What split_heads and merge_heads share on CUDA and HIP: groups of KT_THREADS_PER_HEAD lanes (a
// power of two <= 32), KT_BLOCK_THREADS / KT_THREADS_PER_HEAD per block, each moving one head
// vector VEC = KT_VECTOR_BYTES / sizeof(T) elements at a time as one raw Word, and the index
// arithmetic they do per head vector.
#pragma once

#include "kernels/common/cuda_common.cuh"

namespace kt::head_groups {

using T = KT_T;
constexpr int kThreadsPerHead = KT_THREADS_PER_HEAD;
constexpr int kGroupsPerBlock = KT_BLOCK_THREADS / KT_THREADS_PER_HEAD;
constexpr int kVec = KT_VECTOR_BYTES / int(sizeof(T)) > 0 ? KT_VECTOR_BYTES / int(sizeof(T)) : 1;
using Word = typename kt::Bits<kVec * int(sizeof(T))>::type;

static_assert(kThreadsPerHead >= 1 && kThreadsPerHead <= 32 && (kThreadsPerHead & (kThreadsPerHead - 1)) == 0,
              "threads_per_head must be a power of two <= 32");
static_assert(KT_BLOCK_THREADS % kThreadsPerHead == 0, "block_threads must hold whole groups");

// n / d of non-negative values, in 32 bits where both fit (a 64-bit division is a long software
// routine, and there are two per head vector).
__device__ __forceinline__ long long quotient(long long n, long long d) {
  return n < (1LL << 32) && d < (1LL << 32) ? static_cast<long long>(static_cast<unsigned>(n) / static_cast<unsigned>(d))
                                            : n / d;
}

__device__ __forceinline__ bool word_aligned(const void* p) {
  return reinterpret_cast<unsigned long long>(p) % sizeof(Word) == 0;
}

// The first head vector of this lane's group, and the step between its vectors (grid-stride).
__device__ __forceinline__ long long first_vector() {
  return static_cast<long long>(blockIdx.x) * kGroupsPerBlock + threadIdx.x / kThreadsPerHead;
}
__device__ __forceinline__ long long vector_step() { return static_cast<long long>(gridDim.x) * kGroupsPerBlock; }

}  // namespace kt::head_groups
