// A ballot over the 32 lanes of a kernel's warp, on NVIDIA (warps of 32) and AMD (wavefronts of
// 64 on CDNA, which hold two of a kernel's 32-thread warps, or 32 on RDNA). Kept apart from
// gpu_portable.cuh so that only the kernels that use it change when it does.
#pragma once

#include "kernels/common/gpu_portable.cuh"

namespace kt {

// The lanes of this thread's 32-lane warp for which `predicate` holds, as bits (lane i: bit i).
// Every lane of the warp takes part (a block of whole 32-thread warps, 1-D).
__device__ __forceinline__ unsigned lanes_ballot(bool predicate) {
#if KT_HIP
  const unsigned long long all = __ballot(predicate);
  return static_cast<unsigned>(kLockstepLanes == 64 ? all >> (threadIdx.x & 32) : all);
#else
  return __ballot_sync(0xffffffffu, predicate);
#endif
}

}  // namespace kt
