// Test-only CUDA variants that misbehave on purpose: out[i] = x[i] * 2, repeated `work` times,
// or a fault selected by KT_BEHAVIOUR (string parameters arrive as KT_<NAME>_<value>):
//   ok; oob (writes far outside `out`: an illegal address); hang (never returns);
//   wrong (one element off); nan; compile_error (does not compile); oom (its workspace,
//   launch.workspace_bytes in the search space, is a petabyte: the allocation fails and the
//   kernel never runs). The space declares a workspace, so every variant takes its pointer.
#define KT_BEHAVIOUR_ok 0
#define KT_BEHAVIOUR_oob 1
#define KT_BEHAVIOUR_hang 2
#define KT_BEHAVIOUR_wrong 3
#define KT_BEHAVIOUR_nan 4
#define KT_BEHAVIOUR_compile_error 5
#define KT_BEHAVIOUR_crash 6
#define KT_BEHAVIOUR_abort 7
#define KT_BEHAVIOUR_unsupported 8
#define KT_BEHAVIOUR_oom 9

#if KT_BEHAVIOUR == KT_BEHAVIOUR_compile_error
#error "this variant is meant not to compile"
#endif

// setup_ms is the family's slow-set-up dim (host side only); every dim arrives as an argument.
extern "C" __global__ void fault_injection_kernel(const float* x, float* out, long long n, long long setup_ms,
                                                  float* workspace) {
  (void)setup_ms;
  (void)workspace;
  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
#if KT_BEHAVIOUR == KT_BEHAVIOUR_hang
  if (i == 0)
    for (;;) asm volatile("");  // an empty asm with side effects: the loop cannot be removed
#endif
  if (i >= n) return;
  float value = 0.f;
  for (int repeat = 0; repeat < KT_WORK; ++repeat) value = x[i] * 2.f + value * 0.f;
#if KT_BEHAVIOUR == KT_BEHAVIOUR_oob
  out[i + (1ll << 40)] = value;  // a terabyte past the buffer
#else
  out[i] = value;
#endif
#if KT_BEHAVIOUR == KT_BEHAVIOUR_wrong
  if (i == n / 2) out[i] = value + 1.f;
#elif KT_BEHAVIOUR == KT_BEHAVIOUR_nan
  if (i == 0) out[i] = __int_as_float(0x7fc00000);
#endif
}
