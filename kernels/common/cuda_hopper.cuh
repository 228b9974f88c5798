// Hopper (sm_90a) building blocks shared by the wgmma paths of GEMM and flash attention:
// CUtensorMap parameters, mbarriers, TMA bulk tensor copies (multicast to a cluster too),
// cluster ranks and barriers, and wgmma matrix descriptors.
#pragma once

namespace kt::hopper {

// The kernel parameter type of a CUtensorMap (opaque 128 bytes, 64-byte aligned).
struct alignas(64) TensorMap {
  unsigned long long opaque[16];
};

__device__ __forceinline__ unsigned shared_address(const void* pointer) {
  return static_cast<unsigned>(__cvta_generic_to_shared(pointer));
}

__device__ __forceinline__ void barrier_init(unsigned long long* barrier, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(shared_address(barrier)), "r"(count));
}
__device__ __forceinline__ void barrier_arrive(unsigned long long* barrier) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(shared_address(barrier)) : "memory");
}
__device__ __forceinline__ void barrier_expect_bytes(unsigned long long* barrier, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(shared_address(barrier)), "r"(bytes)
               : "memory");
}
// Waits until the barrier's phase of the given parity has completed.
__device__ __forceinline__ void barrier_wait(unsigned long long* barrier, unsigned parity) {
  unsigned done = 0;
  do {
    asm volatile(
        "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(shared_address(barrier)), "r"(parity)
        : "memory");
  } while (!done);
}

// Box (inner coordinate x = k, outer y = row) of a 2-D tensor map into shared memory.
__device__ __forceinline__ void tma_load(void* destination, const TensorMap* map, int x, int y,
                                         unsigned long long* barrier) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::"r"(
          shared_address(destination)),
      "l"(reinterpret_cast<unsigned long long>(map)), "r"(x), "r"(y), "r"(shared_address(barrier))
      : "memory");
}

// Thread block clusters (sm_90): the block's rank, a barrier over every thread of the cluster
// (not .aligned: a warp may arrive from diverged paths, as a producer warp's one loading thread
// does), an arrival on the barrier at the same shared-memory offset in block `rank`, and a TMA
// load whose box lands at the same offset (and completes bytes on the barrier at the same
// offset) in every block of `mask`. The remote arrival keeps mbarrier.arrive's default release
// semantics: with .release.cluster, measured on the H200, the GEMM's stage hand-offs slowed the
// whole kernel 1.65x (reports/gemm.md).
__device__ __forceinline__ unsigned cluster_rank() {
  unsigned rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  return rank;
}
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release;\n\tbarrier.cluster.wait.acquire;" ::: "memory");
}
__device__ __forceinline__ void barrier_arrive_in_block(unsigned long long* barrier, unsigned rank) {
  unsigned remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(shared_address(barrier)), "r"(rank));
  asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];" ::"r"(remote) : "memory");
}
__device__ __forceinline__ void tma_load_multicast(void* destination, const TensorMap* map, int x, int y,
                                                   unsigned long long* barrier, unsigned short mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
      " [%0], [%1, {%2, %3}], [%4], %5;" ::"r"(shared_address(destination)),
      "l"(reinterpret_cast<unsigned long long>(map)), "r"(x), "r"(y), "r"(shared_address(barrier)), "h"(mask)
      : "memory");
}

// Matrix descriptor of a tile of 128-byte rows in the 128-byte swizzle TMA wrote: start address,
// "leading" byte offset, stride between 8-row groups 1024 bytes, swizzle mode 1 (128 B).
// K-major (rows along M or N, 64 16-bit elements of K per row): the leading offset is unused.
// MN-major (rows along K, 64 elements of M or N per row; attention's V): the leading offset is
// the distance between the tiles of consecutive 64-element blocks of M or N.
__device__ __forceinline__ unsigned long long tile_descriptor(const void* tile, unsigned leading_bytes = 16) {
  const unsigned long long address = shared_address(tile);
  return ((address & 0x3FFFF) >> 4) | (static_cast<unsigned long long>(leading_bytes >> 4) << 16) |
         ((1024ull >> 4) << 32) | (1ull << 62);
}

}  // namespace kt::hopper
