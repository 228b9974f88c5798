// gelu_tpl: out[i] = gelu(in[i]) (the tanh approximation) for i < n, as a templated kernel:
// the spec's KernelName is "gelu<float>", and the tuner compiles the template instance it names
// (NVRTC name expressions; no extern "C" wrapper is written here).
//
// Kernel Tuner style: tunable parameters arrive as preprocessor macros under their own names.
//   block_size_x        threads per block
//   items_per_thread    elements per thread (GridDivX ["block_size_x", "items_per_thread"])
//   contiguous_items    0: a thread's elements are block_size_x apart; 1: adjacent
//   load_first          1: load every element of the thread first, then compute and store;
//                       0: load, compute and store one element at a time
//   min_blocks_per_sm   second argument of __launch_bounds__ (how many blocks of block_size_x
//                       threads the compiler should keep resident per SM: caps the registers)
// The arithmetic of one element is fixed (explicitly rounded operations, in one order), so every
// config writes bit-identical output.

template <typename T>
__device__ __forceinline__ float gelu_of(T value) {
  const float v = static_cast<float>(value);
  const float k0 = 0.7978845608f;  // sqrt(2 / pi)
  const float k1 = 0.044715f;
  const float inner = __fmul_rn(k0, __fmaf_rn(__fmul_rn(k1, v), __fmul_rn(v, v), v));
  return __fmul_rn(__fmul_rn(0.5f, v), __fadd_rn(1.0f, tanhf(inner)));
}

template <typename T>
__global__ void __launch_bounds__(block_size_x, min_blocks_per_sm)
    gelu(T* out, const T* in, int n) {
  const int base = blockIdx.x * (block_size_x * items_per_thread);
#if load_first
  T held[items_per_thread];
#pragma unroll
  for (int k = 0; k < items_per_thread; ++k) {
#if contiguous_items
    const int i = base + threadIdx.x * items_per_thread + k;
#else
    const int i = base + k * block_size_x + threadIdx.x;
#endif
    held[k] = i < n ? in[i] : T(0);
  }
#pragma unroll
  for (int k = 0; k < items_per_thread; ++k) {
#if contiguous_items
    const int i = base + threadIdx.x * items_per_thread + k;
#else
    const int i = base + k * block_size_x + threadIdx.x;
#endif
    if (i < n) out[i] = static_cast<T>(gelu_of(held[k]));
  }
#else
#pragma unroll
  for (int k = 0; k < items_per_thread; ++k) {
#if contiguous_items
    const int i = base + threadIdx.x * items_per_thread + k;
#else
    const int i = base + k * block_size_x + threadIdx.x;
#endif
    if (i < n) out[i] = static_cast<T>(gelu_of(in[i]));
  }
#endif
}
