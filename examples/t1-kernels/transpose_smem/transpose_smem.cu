// transpose_smem: out = transpose(in); `in` has height rows of width floats, `out` has width
// rows of height floats: out[x * height + y] = in[y * width + x]. ProblemSize is [width, height].
//
// Kernel Tuner style: tunable parameters arrive as preprocessor macros under their own names.
//   block_size_x, block_size_y   the thread block
//   tile_size_x, tile_size_y     elements per thread along x and y: a block moves a
//                                (block_size_y * tile_size_y) x (block_size_x * tile_size_x) tile
//                                of `in` (GridDivX ["block_size_x", "tile_size_x"], GridDivY
//                                ["block_size_y", "tile_size_y"])
//   use_shared                   1: the tile is staged in shared memory, so both the reads of
//                                `in` and the writes of `out` run along rows (coalesced);
//                                0: each thread copies its elements directly (writes strided)
//   smem_pad                     floats added to each shared-memory row (0 or 1; 1 avoids bank
//                                conflicts when the tile is read down its columns)
// A pure copy: every config writes bit-identical output.

#define TILE_W (block_size_x * tile_size_x)
#define TILE_H (block_size_y * tile_size_y)

__global__ void __launch_bounds__(block_size_x * block_size_y)
    transpose(float* out, const float* in, int width, int height) {
  const int x0 = blockIdx.x * TILE_W;
  const int y0 = blockIdx.y * TILE_H;
#if use_shared
  __shared__ float tile[TILE_H][TILE_W + smem_pad];
#pragma unroll
  for (int ty = 0; ty < tile_size_y; ++ty) {
#pragma unroll
    for (int tx = 0; tx < tile_size_x; ++tx) {
      const int r = threadIdx.y + ty * block_size_y;
      const int c = threadIdx.x + tx * block_size_x;
      if (y0 + r < height && x0 + c < width) tile[r][c] = in[(y0 + r) * width + x0 + c];
    }
  }
  __syncthreads();
  // The tile leaves as TILE_W rows of `out` of TILE_H elements each; consecutive threads take
  // consecutive elements of a row.
  const int tid = threadIdx.y * block_size_x + threadIdx.x;
  for (int e = tid; e < TILE_W * TILE_H; e += block_size_x * block_size_y) {
    const int c = e / TILE_H;  // column of the tile: row of out
    const int r = e % TILE_H;  // row of the tile: column of out
    if (x0 + c < width && y0 + r < height) out[(x0 + c) * height + y0 + r] = tile[r][c];
  }
#else
#pragma unroll
  for (int ty = 0; ty < tile_size_y; ++ty) {
#pragma unroll
    for (int tx = 0; tx < tile_size_x; ++tx) {
      const int y = y0 + threadIdx.y + ty * block_size_y;
      const int x = x0 + threadIdx.x + tx * block_size_x;
      if (y < height && x < width) out[x * height + y] = in[y * width + x];
    }
  }
#endif
}
