// Building blocks of the sm_80-class tensor-core paths (mma.sync), shared by GEMM and flash
// attention: cp.async copies into shared memory, ldmatrix fragment loads and mma.sync
// m16n8k16 on fp16 or bf16 (KT_PRECISION_BF16 picks bf16) with fp32 accumulators.
//
// Fragment layouts of m16n8k16 (lane = threadIdx.x % 32, g = lane / 4, t = lane % 4):
//   A (16x16, row-major): a[0] rows g, k 2t..2t+1; a[1] row g+8; a[2] row g, k 2t+8..; a[3] row g+8, k 2t+8..
//   B (16x8, "col"):      b0 k 2t..2t+1, column g; b1 k 2t+8..2t+9
//   C (16x8, fp32):       c[0..1] row g, columns 2t, 2t+1; c[2..3] row g+8
// so the C fragments of two neighbouring n8 tiles, rounded in pairs, are exactly the A fragment
// of one k16 step: attention's probabilities go from one product into the next in registers.
#pragma once

namespace kt::mma {

__device__ __forceinline__ unsigned shared_address(const void* pointer) {
  return static_cast<unsigned>(__cvta_generic_to_shared(pointer));
}

// 16 bytes from global to shared memory, bypassing L1; `valid` false (past an edge) writes zeros
// instead and reads nothing.
__device__ __forceinline__ void copy_16(void* destination, const void* source, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(shared_address(destination)), "l"(source),
               "r"(valid ? 16 : 0)
               : "memory");
}
// BYTES (4, 8 or 16) from global to shared memory, both aligned to BYTES; the 16-byte copy
// bypasses L1 (.cg takes no other size), the smaller ones go through it.
template <int BYTES>
__device__ __forceinline__ void copy_async(void* destination, const void* source) {
  static_assert(BYTES == 4 || BYTES == 8 || BYTES == 16, "cp.async copies 4, 8 or 16 bytes");
  if constexpr (BYTES == 16) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(shared_address(destination)), "l"(source) : "memory");
  } else {
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;" ::"r"(shared_address(destination)), "l"(source), "n"(BYTES)
                 : "memory");
  }
}
// Rows [row0, row0 + ROWS) of a [rows, COLS] row-major matrix of 16-bit elements into a shared
// tile of PITCH elements a row, in 16-byte copies by THREADS threads; zeros past `rows`.
template <int ROWS, int COLS, int PITCH, int THREADS, class T>
__device__ __forceinline__ void copy_rows(T* tile, const T* matrix, long long row0, long long rows) {
  constexpr int kChunksPerRow = COLS / 8;
  for (int c = threadIdx.x; c < ROWS * kChunksPerRow; c += THREADS) {
    const int r = c / kChunksPerRow, col = c % kChunksPerRow * 8;
    const bool valid = row0 + r < rows;
    copy_16(tile + r * PITCH + col, valid ? matrix + (row0 + r) * COLS + col : matrix, valid);
  }
}
__device__ __forceinline__ void commit_copies() { asm volatile("cp.async.commit_group;" ::: "memory"); }
// Waits until at most PENDING committed groups of this thread's copies are still in flight.
template <int PENDING>
__device__ __forceinline__ void wait_copies() {
  asm volatile("cp.async.wait_group %0;" ::"n"(PENDING) : "memory");
}

// Four 8x8 matrices of 16-bit elements; lanes 8i..8i+7 give the row addresses of matrix i.
__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], const void* pointer) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(shared_address(pointer)));
}
__device__ __forceinline__ void ldmatrix_x4_trans(unsigned (&r)[4], const void* pointer) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(shared_address(pointer)));
}

// d += a·b on one m16n8k16 tile.
__device__ __forceinline__ void mma_16816(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
#if defined(KT_PRECISION_BF16)
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
#else
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
#endif
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// Two floats rounded to the 16-bit input type and packed as one operand register (lo in the low half).
__device__ __forceinline__ unsigned pack_pair(float lo, float hi) {
  unsigned packed;
#if defined(KT_PRECISION_BF16)
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(packed) : "f"(hi), "f"(lo));
#else
  asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(packed) : "f"(hi), "f"(lo));
#endif
  return packed;
}

}  // namespace kt::mma
