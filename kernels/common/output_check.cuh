// The CUDA backend's on-device output check (tuner/backends/cuda/cuda_output_check.hpp): kernels
// per storage type judge a variant's outputs against the float64 reference as the host's
// tuner/backends/output_check.cpp does, element by element, with the same conversions to double
// (fp16 and bf16 decoded bit by bit, both exact):
// - ktune_closeness_*: as stored_outputs_closeness, the same comparisons and the same IEEE
//   float64 division, so the worst ratio is the host's to the bit;
// - ktune_l2_*: the sums of stored_outputs_error (squared differences and squared reference),
//   one pair per block in a fixed reduction order, added up on the host in block order: the same
//   figure as the host's up to the order of the float64 additions, and the same on every run.
// No includes: the math functions are NVRTC's built-ins. With KT_OUTPUT_CHECK_HOST defined, only
// the element functions are read, by a host test that checks them against the host's own.
#pragma once

typedef unsigned long long kt_u64;

__device__ inline double kt_infinity() { return __longlong_as_double(0x7ff0000000000000ll); }

// An IEEE half, from its bits.
__device__ inline double kt_half_value(unsigned short h) {
  const unsigned e = (h >> 10) & 31u, m = h & 1023u;
  const double sign = (h & 0x8000u) ? -1.0 : 1.0;
  if (e == 31u) return m ? __longlong_as_double(0x7ff8000000000000ll) : sign * kt_infinity();
  if (e == 0u) return sign * ldexp((double)m, -24);
  return sign * ldexp((double)(m | 1024u), (int)e - 25);
}

// A bfloat16, from its bits: the high half of a float.
__device__ inline double kt_bf16_value(unsigned short h) { return (double)__int_as_float((int)((unsigned)h << 16)); }

// One element: `worst` keeps the largest |got - expected| / (atol + rtol |expected|), `bad` is set
// by a value that is NaN or infinite where the reference is not that same value. A NaN reference
// marks an element that is not checked.
__device__ inline void kt_judge(double v, double e, double atol, double rtol, double& worst, unsigned& bad) {
  if (e != e) return;
  if (v == e) return;  // also the same infinity
  if (v - v != 0.0 || fabs(e) == kt_infinity()) {
    bad = 1u;
    return;
  }
  const double allowed = atol + rtol * fabs(e);
  worst = fmax(worst, allowed > 0 ? fabs(v - e) / allowed : kt_infinity());
}

// One element of the relative L2 error: a NaN reference is not checked, an infinite one passes
// only the same infinity, any other non-finite value sets `bad`.
__device__ inline void kt_l2(double v, double e, double& diff_sq, double& ref_sq, unsigned& bad) {
  if (e != e) return;
  if (fabs(e) == kt_infinity()) {
    if (v != e) bad = 1u;
    return;
  }
  if (v - v != 0.0) {
    bad = 1u;
    return;
  }
  const double d = v - e;
  diff_sq += d * d;
  ref_sq += e * e;
}

#ifndef KT_OUTPUT_CHECK_HOST
#define KT_SAME_VALUE(x) ((double)(x))

// Blocks of 256 reduce in shared memory; one thread a block updates the result: the worst ratio's
// bits (a non-negative double orders as its bits do), then the flag of a bad value.
__device__ inline void kt_reduce(double worst, unsigned bad, kt_u64* result) {
  __shared__ double worst_of[256];
  __shared__ unsigned bad_of[256];
  worst_of[threadIdx.x] = worst;
  bad_of[threadIdx.x] = bad;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) {
      worst_of[threadIdx.x] = fmax(worst_of[threadIdx.x], worst_of[threadIdx.x + s]);
      bad_of[threadIdx.x] |= bad_of[threadIdx.x + s];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0 && worst_of[0] > 0) atomicMax(result, (kt_u64)__double_as_longlong(worst_of[0]));
  if (threadIdx.x == 0 && bad_of[0]) atomicOr((unsigned*)(result + 1), 1u);
}

// Each block's two sums, reduced in shared memory in a fixed order, at sums[2 * block].
__device__ inline void kt_reduce_sums(double diff_sq, double ref_sq, unsigned bad, double* sums, unsigned* flag) {
  __shared__ double diff_of[256];
  __shared__ double ref_of[256];
  __shared__ unsigned bad_of[256];
  diff_of[threadIdx.x] = diff_sq;
  ref_of[threadIdx.x] = ref_sq;
  bad_of[threadIdx.x] = bad;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) {
      diff_of[threadIdx.x] += diff_of[threadIdx.x + s];
      ref_of[threadIdx.x] += ref_of[threadIdx.x + s];
      bad_of[threadIdx.x] |= bad_of[threadIdx.x + s];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    sums[2 * blockIdx.x] = diff_of[0];
    sums[2 * blockIdx.x + 1] = ref_of[0];
    if (bad_of[0]) atomicOr(flag, 1u);
  }
}

#define KT_L2_KERNEL(suffix, type, value)                                                              \
  extern "C" __global__ void __launch_bounds__(256) ktune_l2_##suffix(                                \
      const type* got, const double* expected, kt_u64 n, double* sums, unsigned* flag) {              \
    double diff_sq = 0, ref_sq = 0;                                                                    \
    unsigned bad = 0;                                                                                  \
    for (kt_u64 i = blockIdx.x * (kt_u64)blockDim.x + threadIdx.x; i < n; i += (kt_u64)gridDim.x * blockDim.x) \
      kt_l2(value(got[i]), expected[i], diff_sq, ref_sq, bad);                                         \
    kt_reduce_sums(diff_sq, ref_sq, bad, sums, flag);                                                  \
  }

#define KT_CLOSENESS_KERNEL(suffix, type, value)                                                        \
  extern "C" __global__ void __launch_bounds__(256) ktune_closeness_##suffix(                         \
      const type* got, const double* expected, kt_u64 n, double atol, double rtol, kt_u64* result) {  \
    double worst = 0;                                                                                  \
    unsigned bad = 0;                                                                                  \
    for (kt_u64 i = blockIdx.x * (kt_u64)blockDim.x + threadIdx.x; i < n; i += (kt_u64)gridDim.x * blockDim.x) \
      kt_judge(value(got[i]), expected[i], atol, rtol, worst, bad);                                    \
    kt_reduce(worst, bad, result);                                                                     \
  }
KT_CLOSENESS_KERNEL(f32, float, KT_SAME_VALUE)
KT_CLOSENESS_KERNEL(f64, double, KT_SAME_VALUE)
KT_CLOSENESS_KERNEL(f16, unsigned short, kt_half_value)
KT_CLOSENESS_KERNEL(bf16, unsigned short, kt_bf16_value)
KT_CLOSENESS_KERNEL(i8, signed char, KT_SAME_VALUE)
KT_CLOSENESS_KERNEL(u8, unsigned char, KT_SAME_VALUE)
KT_CLOSENESS_KERNEL(i16, short, KT_SAME_VALUE)
KT_CLOSENESS_KERNEL(u16, unsigned short, KT_SAME_VALUE)
KT_CLOSENESS_KERNEL(i32, int, KT_SAME_VALUE)
KT_CLOSENESS_KERNEL(u32, unsigned, KT_SAME_VALUE)
KT_CLOSENESS_KERNEL(i64, long long, KT_SAME_VALUE)
KT_CLOSENESS_KERNEL(u64, unsigned long long, KT_SAME_VALUE)
KT_L2_KERNEL(f32, float, KT_SAME_VALUE)
KT_L2_KERNEL(f64, double, KT_SAME_VALUE)
KT_L2_KERNEL(f16, unsigned short, kt_half_value)
KT_L2_KERNEL(bf16, unsigned short, kt_bf16_value)
KT_L2_KERNEL(i8, signed char, KT_SAME_VALUE)
KT_L2_KERNEL(u8, unsigned char, KT_SAME_VALUE)
KT_L2_KERNEL(i16, short, KT_SAME_VALUE)
KT_L2_KERNEL(u16, unsigned short, KT_SAME_VALUE)
KT_L2_KERNEL(i32, int, KT_SAME_VALUE)
KT_L2_KERNEL(u32, unsigned, KT_SAME_VALUE)
KT_L2_KERNEL(i64, long long, KT_SAME_VALUE)
KT_L2_KERNEL(u64, unsigned long long, KT_SAME_VALUE)
#endif
