// axpy_inplace: y[i] = a * x[i] + y[i] for i < n, updating y in place. The spec's y has
// "AccessType": "ReadWrite": the tuners upload its initial data, read it back as the output,
// and restore it before each launch, so every launch computes the same thing.
//
// Kernel Tuner style: tunable parameters arrive as preprocessor macros under their own names.
//   block_size_x     threads per block
//   tile_size_x      vectors per thread
//   vector_width     floats per load and store: 1 (float), 2 (float2) or 4 (float4); a block
//                    covers block_size_x * tile_size_x * vector_width elements (GridDivX
//                    ["block_size_x", "tile_size_x", "vector_width"])
//   use_restrict     1: the pointers are declared __restrict__
// A thread's vectors are block_size_x apart, so a warp's accesses stay adjacent. The vector that
// holds the end of the array (n need not be a multiple of vector_width) is done element by element.
// Every element gets the same single fmaf, so every config writes bit-identical output.

#if use_restrict
#define RESTRICT __restrict__
#else
#define RESTRICT
#endif

#if vector_width == 4
typedef float4 vec_t;
#elif vector_width == 2
typedef float2 vec_t;
#else
typedef float vec_t;
#endif

__device__ __forceinline__ float axpy1(float a, float x, float y) { return fmaf(a, x, y); }
__device__ __forceinline__ float2 axpy1(float a, float2 x, float2 y) {
  return make_float2(fmaf(a, x.x, y.x), fmaf(a, x.y, y.y));
}
__device__ __forceinline__ float4 axpy1(float a, float4 x, float4 y) {
  return make_float4(fmaf(a, x.x, y.x), fmaf(a, x.y, y.y), fmaf(a, x.z, y.z), fmaf(a, x.w, y.w));
}

__global__ void axpy(float* RESTRICT y, const float* RESTRICT x, float a, int n) {
  const int first = blockIdx.x * (block_size_x * tile_size_x) + threadIdx.x;  // in vectors
#pragma unroll
  for (int t = 0; t < tile_size_x; ++t) {
    const int v = first + t * block_size_x;
    const int i = v * vector_width;  // its first element
    if (i + vector_width <= n) {
      vec_t* yv = reinterpret_cast<vec_t*>(y) + v;
      const vec_t* xv = reinterpret_cast<const vec_t*>(x) + v;
      *yv = axpy1(a, *xv, *yv);
    } else {
      for (int k = i; k < n; ++k) y[k] = fmaf(a, x[k], y[k]);
    }
  }
}
