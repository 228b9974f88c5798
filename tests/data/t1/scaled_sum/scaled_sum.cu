// out[i] = alpha * x[i] + y[i], written the way Kernel Tuner kernels are: the tunable parameters
// (block_size_x, items_per_thread, use_ldg, use_restrict) are preprocessor macros defined by the
// tuner, and each thread handles items_per_thread elements strided by the block.
#if use_restrict
#define RESTRICT __restrict__
#else
#define RESTRICT
#endif

extern "C" __global__ void scaled_sum(float* RESTRICT out, const float* RESTRICT x, const float* RESTRICT y,
                                      float alpha, int n) {
  const int first = blockIdx.x * block_size_x * items_per_thread + threadIdx.x;
#pragma unroll
  for (int k = 0; k < items_per_thread; ++k) {
    const int i = first + k * block_size_x;
    if (i < n) {
#if use_ldg
      out[i] = alpha * __ldg(x + i) + __ldg(y + i);
#else
      out[i] = alpha * x[i] + y[i];
#endif
    }
  }
}
