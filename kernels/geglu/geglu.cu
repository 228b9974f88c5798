// GeGLU on CUDA: out[r, c] = gelu(x[r, c]) * x[r, cols + c] with the exact (erf) GELU,
// gelu(g) = 0.5 * g * (1 + erf(g / sqrt(2))), in float with the full-precision erff (at most
// 2 ulp): the usual approximations (tanh form, __expf-based erf) miss the fp32 tolerance. The
// loop, layout and accesses are kernels/common/cuda_gated.cuh's (shared with swiglu).
// Defines (search_spaces/geglu.cuda.json): KT_BLOCK_THREADS, KT_VECTOR_BYTES, KT_ITEMS,
// KT_BLOCKS_PER_SM (launch geometry only), KT_STREAMING; KT_T; KT_DIM_COLS.
#include "kernels/common/cuda_gated.cuh"

extern "C" __global__ void __launch_bounds__(KT_BLOCK_THREADS)
    geglu_kernel(const kt::gated::T* __restrict__ x, kt::gated::T* __restrict__ out, long long rows, long long cols) {
  kt::gated::run(x, out, rows, cols, [](float g) { return 0.5f * g * (1.f + erff(g * 0.70710678118654752f)); });
}
