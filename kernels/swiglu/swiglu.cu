// SwiGLU on CUDA: out[r, c] = silu(x[r, c]) * x[r, cols + c], silu(g) = g / (1 + exp(-g)), in
// float. The loop, layout and accesses are kernels/common/cuda_gated.cuh's (shared with geglu).
// Defines (search_spaces/swiglu.cuda.json): KT_BLOCK_THREADS, KT_VECTOR_BYTES, KT_ITEMS,
// KT_BLOCKS_PER_SM (launch geometry only), KT_STREAMING, KT_FAST_EXP (1: hardware ex2 and rcp, 0: expf and IEEE division);
// KT_T; KT_DIM_COLS.
#include "kernels/common/cuda_gated.cuh"

extern "C" __global__ void __launch_bounds__(KT_BLOCK_THREADS)
    swiglu_kernel(const kt::gated::T* __restrict__ x, kt::gated::T* __restrict__ out, long long rows, long long cols) {
  kt::gated::run(x, out, rows, cols, [](float g) {
#if KT_FAST_EXP
    // g * 1 / (1 + 2^(-g log2 e)) on the special-function unit: no division, no range handling
    // (g below about -88 gives 2^.. = inf, 1 / inf = 0, silu = -0, as it should round to).
    return g * kt::reciprocal_approx(1.f + kt::exp2_flush_subnormal(g * -1.4426950408889634f));
#else
    return g / (1.f + expf(-g));
#endif
  });
}
