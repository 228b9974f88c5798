// SwiGLU on CUDA: out[r, c] = silu(x[r, c]) * x[r, cols + c], silu(g) = g / (1 + exp(-g)), in
// float. The loop, layout and accesses are kernels/common/cuda_gated.cuh's (shared with geglu).
// Defines (search_spaces/swiglu.cuda.json): KT_BLOCK_THREADS, KT_VECTOR_BYTES, KT_ITEMS,
// KT_BLOCKS_PER_SM (launch geometry only), KT_STREAMING, KT_FAST_EXP (1: __expf, 0: expf);
// KT_T; KT_DIM_COLS.
#include "kernels/common/cuda_gated.cuh"

extern "C" __global__ void __launch_bounds__(KT_BLOCK_THREADS)
    swiglu_kernel(const kt::gated::T* __restrict__ x, kt::gated::T* __restrict__ out, long long rows, long long cols) {
  kt::gated::run(x, out, rows, [](float g) {
#if KT_FAST_EXP
    return g / (1.f + __expf(-g));
#else
    return g / (1.f + expf(-g));
#endif
  });
}
