// The CUDA backend's on-device output check (tuner/backends/cuda/cuda_output_check.hpp): one
// kernel per storage type judges a variant's outputs against the float64 reference as
// stored_outputs_closeness does on the host (tuner/backends/output_check.cpp), element by element:
// the same conversions to double (fp16 and bf16 decoded bit by bit, both exact), the same
// comparisons and the same IEEE float64 division, so the worst ratio is the host's to the bit.
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
#endif
