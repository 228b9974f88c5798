// y = a * x + y in place, in Kernel Tuner's style: a plain template kernel (no extern "C"), its
// coefficients read from a __constant__ array the tuner fills (use_constant 1) or through the
// pointer argument holding the same values (use_constant 0). tile elements per thread, the grid
// from ProblemSize / (block_size_x * tile). The configs with tile 4 and use_constant 1 return
// without working, on purpose: the tests expect them caught as wrong_result against the default
// config's output, and flagged as implausibly fast with --no-verify.
__constant__ float coefficients[4];

template <typename T>
__global__ void axpy_in_place(T* y, const T* x, const T* scale, int n) {
#if tile == 4 && use_constant == 1
  return;
#endif
  const int first = blockIdx.x * block_size_x * tile + threadIdx.x;
#pragma unroll
  for (int t = 0; t < tile; ++t) {
    const int i = first + t * block_size_x;
    if (i < n) {
#if use_constant
      const T a = coefficients[i % 4];
#else
      const T a = scale[i % 4];
#endif
      y[i] = a * x[i] + y[i];
    }
  }
}
