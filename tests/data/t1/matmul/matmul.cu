// C = A * B in fp32, row-major: A is M x K, B is K x N, C is M x N. Written the way Kernel Tuner
// kernels are: the tunable parameters are preprocessor macros defined by the tuner.
//
//   block_size_x, block_size_y  threads of a block along N and M
//   tile_size_x, tile_size_y    outputs per thread along N and M; a block computes a
//                               BM x BN tile of C (BM = block_size_y * tile_size_y,
//                               BN = block_size_x * tile_size_x)
//   tile_k                      depth of the slices of A (BM x tile_k) and B (tile_k x BN)
//                               staged in shared memory per step
//   vector_width                floats per global load (1: float, 2: float2, 4: float4)
//   tile_stride                 1: a thread's outputs are strided by the block (row ty + i *
//                               block_size_y, column tx + j * block_size_x); 0: they are
//                               contiguous (row ty * tile_size_y + i, column tx * tile_size_x + j)
//   use_padding                 1: pad each row of the transposed A slice by one float
//                               (fewer shared-memory bank conflicts on the transposing stores)
//   prefetch                    1: load the next slices from global memory into registers
//                               while computing on the current ones
//
// The spec's conditions guarantee that M % BM == 0, N % BN == 0, K % tile_k == 0 and that the
// vector loads of a slice divide evenly over the threads of a block; the kernel relies on them.

#define BM (block_size_y * tile_size_y)
#define BN (block_size_x * tile_size_x)
#define NUM_THREADS (block_size_x * block_size_y)
#define A_STRIDE (BM + use_padding)
#define A_VECS_PER_ROW (tile_k / vector_width)  // vectors in a tile_k-wide row of the A slice
#define B_VECS_PER_ROW (BN / vector_width)      // vectors in a BN-wide row of the B slice
#define A_LOADS ((BM * A_VECS_PER_ROW) / NUM_THREADS)
#define B_LOADS ((tile_k * B_VECS_PER_ROW) / NUM_THREADS)

#if tile_stride
#define OUT_ROW(i) (threadIdx.y + (i) * block_size_y)
#define OUT_COL(j) (threadIdx.x + (j) * block_size_x)
#else
#define OUT_ROW(i) (threadIdx.y * tile_size_y + (i))
#define OUT_COL(j) (threadIdx.x * tile_size_x + (j))
#endif

#if vector_width == 4
typedef float4 vec_t;
#define VEC_GET(v, e) ((e) == 0 ? (v).x : (e) == 1 ? (v).y : (e) == 2 ? (v).z : (v).w)
#elif vector_width == 2
typedef float2 vec_t;
#define VEC_GET(v, e) ((e) == 0 ? (v).x : (v).y)
#elif vector_width == 1
typedef float vec_t;
#define VEC_GET(v, e) (v)
#else
#error "vector_width must be 1, 2 or 4"
#endif

extern "C" __global__ void __launch_bounds__(NUM_THREADS)
    matmul_kernel(float* __restrict__ C, const float* __restrict__ A, const float* __restrict__ B, int M, int N,
                  int K) {
  __shared__ float As[tile_k][A_STRIDE];  // the A slice, transposed: As[k][m]
  __shared__ float Bs[tile_k][BN];        // the B slice: Bs[k][n]

  const int tid = threadIdx.y * block_size_x + threadIdx.x;
  const int m0 = blockIdx.y * BM;
  const int n0 = blockIdx.x * BN;
  const float* A_block = A + (size_t)m0 * K;
  const float* B_block = B + n0;

  float acc[tile_size_y][tile_size_x];
#pragma unroll
  for (int i = 0; i < tile_size_y; ++i)
#pragma unroll
    for (int j = 0; j < tile_size_x; ++j) acc[i][j] = 0.0f;

  vec_t a_reg[A_LOADS];
  vec_t b_reg[B_LOADS];

  // Vector v of the A slice is row v / A_VECS_PER_ROW, columns (v % A_VECS_PER_ROW) * vector_width
  // and on; vector v of the B slice is row v / B_VECS_PER_ROW, likewise.
#define LOAD_SLICES(k0)                                                                            \
  do {                                                                                             \
    _Pragma("unroll") for (int l = 0; l < A_LOADS; ++l) {                                          \
      const int v = tid + l * NUM_THREADS;                                                         \
      const int row = v / A_VECS_PER_ROW;                                                          \
      const int col = (v % A_VECS_PER_ROW) * vector_width;                                         \
      a_reg[l] = *reinterpret_cast<const vec_t*>(A_block + (size_t)row * K + (k0) + col);          \
    }                                                                                              \
    _Pragma("unroll") for (int l = 0; l < B_LOADS; ++l) {                                          \
      const int v = tid + l * NUM_THREADS;                                                         \
      const int row = v / B_VECS_PER_ROW;                                                          \
      const int col = (v % B_VECS_PER_ROW) * vector_width;                                         \
      b_reg[l] = *reinterpret_cast<const vec_t*>(B_block + (size_t)((k0) + row) * N + col);        \
    }                                                                                              \
  } while (0)

#define STORE_SLICES()                                                                             \
  do {                                                                                             \
    _Pragma("unroll") for (int l = 0; l < A_LOADS; ++l) {                                          \
      const int v = tid + l * NUM_THREADS;                                                         \
      const int row = v / A_VECS_PER_ROW;                                                          \
      const int col = (v % A_VECS_PER_ROW) * vector_width;                                         \
      _Pragma("unroll") for (int e = 0; e < vector_width; ++e) As[col + e][row] = VEC_GET(a_reg[l], e); \
    }                                                                                              \
    _Pragma("unroll") for (int l = 0; l < B_LOADS; ++l) {                                          \
      const int v = tid + l * NUM_THREADS;                                                         \
      const int row = v / B_VECS_PER_ROW;                                                          \
      const int col = (v % B_VECS_PER_ROW) * vector_width;                                         \
      _Pragma("unroll") for (int e = 0; e < vector_width; ++e) Bs[row][col + e] = VEC_GET(b_reg[l], e); \
    }                                                                                              \
  } while (0)

#define COMPUTE_SLICE()                                                                            \
  do {                                                                                             \
    _Pragma("unroll") for (int k = 0; k < tile_k; ++k) {                                           \
      float a[tile_size_y];                                                                        \
      float b[tile_size_x];                                                                        \
      _Pragma("unroll") for (int i = 0; i < tile_size_y; ++i) a[i] = As[k][OUT_ROW(i)];            \
      _Pragma("unroll") for (int j = 0; j < tile_size_x; ++j) b[j] = Bs[k][OUT_COL(j)];            \
      _Pragma("unroll") for (int i = 0; i < tile_size_y; ++i)                                      \
      _Pragma("unroll") for (int j = 0; j < tile_size_x; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]); \
    }                                                                                              \
  } while (0)

#if prefetch
  LOAD_SLICES(0);
  for (int k0 = 0; k0 < K; k0 += tile_k) {
    STORE_SLICES();
    __syncthreads();
    if (k0 + tile_k < K) LOAD_SLICES(k0 + tile_k);  // in flight while this slice is computed on
    COMPUTE_SLICE();
    __syncthreads();
  }
#else
  for (int k0 = 0; k0 < K; k0 += tile_k) {
    LOAD_SLICES(k0);
    STORE_SLICES();
    __syncthreads();
    COMPUTE_SLICE();
    __syncthreads();
  }
#endif

#pragma unroll
  for (int i = 0; i < tile_size_y; ++i)
#pragma unroll
    for (int j = 0; j < tile_size_x; ++j) C[(size_t)(m0 + OUT_ROW(i)) * N + n0 + OUT_COL(j)] = acc[i][j];
}
