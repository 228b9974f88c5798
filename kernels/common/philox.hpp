// Philox4x32-10 (Salmon, Moraes, Dror, Shaw: "Parallel random numbers: as easy as 1, 2, 3",
// SC'11; the generator of Random123, cuRAND's curand_Philox4x32_10 and PyTorch's dropout), a
// counter-based RNG: the 4 output words are a pure function of a 128-bit counter and a 64-bit
// key, so any thread of any backend can produce the random bits of any element on its own and
// every backend draws exactly the same mask.
//
// Plain header code for host C++ and CUDA/HIP device code alike (NVRTC/hiprtc included): no
// standard library calls, only fixed-width unsigned integers, and every function is
// KT_HOST_DEVICE (`__host__ __device__` under nvcc, NVRTC, hipcc, hiprtc; empty otherwise).
//
// The algorithm (checked against Random123's kat_vectors in tests/unit/test_philox.cpp):
//   multipliers M0 = 0xD2511F53, M1 = 0xCD9E8D57; key increments W0 = 0x9E3779B9, W1 = 0xBB67AE85
//   one round, with (hi, lo) the high and low 32 bits of a 32x32->64-bit product:
//     (hi0, lo0) = M0 * c0;  (hi1, lo1) = M1 * c2
//     (c0, c1, c2, c3) <- (hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0)
//   ten rounds; between consecutive rounds the key is bumped: k0 += W0, k1 += W1 (mod 2^32).
//
// Element mapping used by ktune's dropout kernels (softmax_dropout; the same on every backend):
//   key     = (seed low 32 bits, seed high 32 bits)
//   counter = (g low 32 bits, g high 32 bits, offset low 32 bits, offset high 32 bits) with
//             g = i / 8 and i the element's linear index in the output tensor (row-major,
//             i = row * cols + col)
//   element i takes 16 bits of its group's Philox4x32-10 call: half (i % 2) of word (i % 8) / 2,
//             the low half first, so the 128 bits of group g belong to elements 8g..8g+7
//             (16 bits per element: dropout needs no more, and one call then serves 8 elements,
//             which halves the generator's cost, the part that limits a fused GPU kernel)
//   uniform u = bits * 2^-16, in [0, 1), exact in float and double
//   the element is kept iff u >= p (dropped, i.e. zeroed, iff u < p); kept elements are scaled
//             by 1 / (1 - p). Because u is a multiple of 2^-16, "u >= p" gives the same answer
//             whether p is compared as a float or a double for p = 0.1 (both lie between
//             6553 * 2^-16 and 6554 * 2^-16), so float kernels and the float64 reference agree
//             exactly on the mask. The probability actually applied is 6554 / 65536 = 0.1000061
//             (p rounded up to a multiple of 2^-16).
#pragma once

#if defined(__CUDACC__) || defined(__CUDACC_RTC__) || defined(__HIPCC__) || defined(__HIPCC_RTC__)
#define KT_HOST_DEVICE __host__ __device__
#else
#define KT_HOST_DEVICE
#endif

#if defined(__CUDACC_RTC__) || defined(__HIPCC_RTC__)
// Run-time compilers have no <cstdint> by default.
namespace ktune {
namespace philox {
typedef unsigned int u32;
typedef unsigned long long u64;
}  // namespace philox
}  // namespace ktune
#else
#include <cstdint>
namespace ktune {
namespace philox {
typedef std::uint32_t u32;
typedef std::uint64_t u64;
}  // namespace philox
}  // namespace ktune
#endif

namespace ktune {
namespace philox {

struct U32x4 {
  u32 v[4];
};

struct U32x2 {
  u32 v[2];
};

constexpr u32 kM0 = 0xD2511F53u;
constexpr u32 kM1 = 0xCD9E8D57u;
constexpr u32 kW0 = 0x9E3779B9u;
constexpr u32 kW1 = 0xBB67AE85u;
constexpr int kRounds = 10;

KT_HOST_DEVICE inline U32x4 single_round(U32x4 c, U32x2 k) {
#if defined(__CUDA_ARCH__)
  // One mul.wide.u32 per product, split into its words: the 64-bit product written in C++ costs
  // an extra add of zero per word in the SASS, and __umulhi with a separate low multiply two
  // multiplies instead of one IMAD.WIDE.
  u32 hi0, lo0, hi1, lo1;
  asm("{.reg .u64 p; mul.wide.u32 p, %2, %3; mov.b64 {%1, %0}, p;}" : "=r"(hi0), "=r"(lo0) : "r"(kM0), "r"(c.v[0]));
  asm("{.reg .u64 p; mul.wide.u32 p, %2, %3; mov.b64 {%1, %0}, p;}" : "=r"(hi1), "=r"(lo1) : "r"(kM1), "r"(c.v[2]));
#else
  const u64 p0 = static_cast<u64>(kM0) * c.v[0];
  const u64 p1 = static_cast<u64>(kM1) * c.v[2];
  const u32 hi0 = static_cast<u32>(p0 >> 32), lo0 = static_cast<u32>(p0);
  const u32 hi1 = static_cast<u32>(p1 >> 32), lo1 = static_cast<u32>(p1);
#endif
  U32x4 out;
  out.v[0] = hi1 ^ c.v[1] ^ k.v[0];
  out.v[1] = lo1;
  out.v[2] = hi0 ^ c.v[3] ^ k.v[1];
  out.v[3] = lo0;
  return out;
}

// Philox4x32-10 of `counter` under `key`.
KT_HOST_DEVICE inline U32x4 philox4x32_10(U32x4 counter, U32x2 key) {
  for (int r = 0; r < kRounds; ++r) {
    if (r > 0) {
      key.v[0] += kW0;
      key.v[1] += kW1;
    }
    counter = single_round(counter, key);
  }
  return counter;
}

KT_HOST_DEVICE inline U32x2 key_of(u64 seed) {
  U32x2 key;
  key.v[0] = static_cast<u32>(seed);
  key.v[1] = static_cast<u32>(seed >> 32);
  return key;
}

// The counter of element group g (elements 4g..4g+3) at `offset`.
KT_HOST_DEVICE inline U32x4 counter_of(u64 group, u64 offset) {
  U32x4 counter;
  counter.v[0] = static_cast<u32>(group);
  counter.v[1] = static_cast<u32>(group >> 32);
  counter.v[2] = static_cast<u32>(offset);
  counter.v[3] = static_cast<u32>(offset >> 32);
  return counter;
}

// Elements per Philox call.
constexpr int kElementsPerGroup = 8;

// The random words of element group g: elements 8g..8g+7, two per word.
KT_HOST_DEVICE inline U32x4 group_bits(u64 seed, u64 offset, u64 group) {
  return philox4x32_10(counter_of(group, offset), key_of(seed));
}

// The 16 random bits of element j (0..7) of a group's words.
KT_HOST_DEVICE inline u32 element_of_group(const U32x4& words, int j) {
  return (words.v[j >> 1] >> ((j & 1) * 16)) & 0xffffu;
}

// The 16 random bits of element i (computes its whole group; kernels that handle the elements
// of a group together should call group_bits once instead).
KT_HOST_DEVICE inline u32 element_bits(u64 seed, u64 offset, u64 i) {
  return element_of_group(group_bits(seed, offset, i >> 3), static_cast<int>(i & 7u));
}

// u = bits * 2^-16, exact in float.
KT_HOST_DEVICE inline float uniform(u32 bits) { return static_cast<float>(bits) * 1.52587890625e-05f; }

// Dropout keeps an element iff u >= p.
KT_HOST_DEVICE inline bool keep(u32 bits, float p) { return uniform(bits) >= p; }

}  // namespace philox
}  // namespace ktune
