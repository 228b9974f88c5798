// matmul_smem: C = A * B in fp32 with shared-memory tiles; A is M x K, B is K x N and C is
// M x N, all row-major. ProblemSize is [N, M]: x runs along the columns of C, y along its rows.
//
// Kernel Tuner style: tunable parameters arrive as preprocessor macros under their own names.
//   block_size_x, block_size_y   the thread block
//   tile_size_x, tile_size_y     outputs per thread along x (columns) and y (rows): a block
//                                computes a (block_size_y * tile_size_y) x (block_size_x *
//                                tile_size_x) tile of C (GridDivX ["block_size_x",
//                                "tile_size_x"], GridDivY ["block_size_y", "tile_size_y"])
//   tile_k                       the depth of the A and B tiles staged in shared memory per step
// A thread's outputs are block_size_x apart in x and block_size_y apart in y, so a warp's stores
// and shared-memory reads stay adjacent. Tiles past the edges of A and B read zeros.
// Every output is accumulated by one thread, k = 0, 1, ..., K - 1 in order, with fmaf (the zero
// padding past K adds exact zeros), so every config writes bit-identical output.

#define TILE_M (block_size_y * tile_size_y)
#define TILE_N (block_size_x * tile_size_x)
#define THREADS (block_size_x * block_size_y)

__global__ void __launch_bounds__(block_size_x * block_size_y)
    matmul(float* C, const float* A, const float* B, int M, int N, int K) {
  __shared__ float As[TILE_M][tile_k + 1];  // +1: rows read down a column stay conflict-free
  __shared__ float Bs[tile_k][TILE_N];

  const int m0 = blockIdx.y * TILE_M;
  const int n0 = blockIdx.x * TILE_N;
  const int tid = threadIdx.y * block_size_x + threadIdx.x;

  float acc[tile_size_y][tile_size_x];
#pragma unroll
  for (int i = 0; i < tile_size_y; ++i)
#pragma unroll
    for (int j = 0; j < tile_size_x; ++j) acc[i][j] = 0.0f;

  for (int k0 = 0; k0 < K; k0 += tile_k) {
    for (int e = tid; e < TILE_M * tile_k; e += THREADS) {
      const int r = e / tile_k;
      const int c = e % tile_k;
      As[r][c] = (m0 + r < M && k0 + c < K) ? A[(m0 + r) * K + k0 + c] : 0.0f;
    }
    for (int e = tid; e < tile_k * TILE_N; e += THREADS) {
      const int r = e / TILE_N;
      const int c = e % TILE_N;
      Bs[r][c] = (k0 + r < K && n0 + c < N) ? B[(k0 + r) * N + n0 + c] : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < tile_k; ++k) {
      float a[tile_size_y];
      float b[tile_size_x];
#pragma unroll
      for (int i = 0; i < tile_size_y; ++i) a[i] = As[threadIdx.y + i * block_size_y][k];
#pragma unroll
      for (int j = 0; j < tile_size_x; ++j) b[j] = Bs[k][threadIdx.x + j * block_size_x];
#pragma unroll
      for (int i = 0; i < tile_size_y; ++i)
#pragma unroll
        for (int j = 0; j < tile_size_x; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }

#pragma unroll
  for (int i = 0; i < tile_size_y; ++i) {
#pragma unroll
    for (int j = 0; j < tile_size_x; ++j) {
      const int row = m0 + threadIdx.y + i * block_size_y;
      const int col = n0 + threadIdx.x + j * block_size_x;
      if (row < M && col < N) C[row * N + col] = acc[i][j];
    }
  }
}
