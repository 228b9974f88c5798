// conv2d_cmem: a 2-D convolution (correlation) with a 7x7 filter held in __constant__ memory:
//   out[y][x] = sum over i < 7, j < 7 of in[y + i][x + j] * d_filter[i * 7 + j]
// for x < width, y < height; `in` has (height + 6) rows of (width + 6) floats.
//
// The tuner fills the __constant__ array d_filter: the spec's argument of that Name has
// "MemType": "Constant" (Kernel Tuner's cmem_args). Both Kernel Tuner and ktune also pass that
// argument as an ordinary pointer in its position, so the kernel takes `filter` too; with
// use_cmem 0 it reads the filter from that pointer instead (the same values), which lets a
// tune's own check (every config against the default config, use_cmem 1) catch a __constant__
// array that was not filled.
//
// Kernel Tuner style: tunable parameters arrive as preprocessor macros under their own names.
//   block_size_x, block_size_y   the thread block
//   tile_size_x, tile_size_y     outputs per thread in x and in y (a block covers
//                                block_size_x * tile_size_x by block_size_y * tile_size_y
//                                outputs: GridDivX ["block_size_x", "tile_size_x"], GridDivY
//                                ["block_size_y", "tile_size_y"])
//   use_shared                   1: the block's input window is staged in shared memory
//   use_cmem                     1: the filter is read from __constant__ d_filter; 0: from `filter`
// Every output is accumulated by one thread in a fixed (i, j) order with fmaf, whatever the
// config, so every config writes bit-identical output.

#define FILTER_W 7
#define FILTER_H 7
#define TILE_W (block_size_x * tile_size_x)
#define TILE_H (block_size_y * tile_size_y)

__constant__ float d_filter[FILTER_W * FILTER_H];

__global__ void __launch_bounds__(block_size_x * block_size_y)
    conv2d(float* out, const float* in, const float* filter, int width, int height) {
  const int in_w = width + FILTER_W - 1;
  const int x0 = blockIdx.x * TILE_W;
  const int y0 = blockIdx.y * TILE_H;

#if use_shared
  const int in_h = height + FILTER_H - 1;
  __shared__ float window[TILE_H + FILTER_H - 1][TILE_W + FILTER_W - 1];
  for (int r = threadIdx.y; r < TILE_H + FILTER_H - 1; r += block_size_y) {
    for (int c = threadIdx.x; c < TILE_W + FILTER_W - 1; c += block_size_x) {
      const int gy = y0 + r;
      const int gx = x0 + c;
      window[r][c] = (gy < in_h && gx < in_w) ? in[gy * in_w + gx] : 0.0f;
    }
  }
  __syncthreads();
#endif

  float acc[tile_size_y][tile_size_x];
#pragma unroll
  for (int ty = 0; ty < tile_size_y; ++ty)
#pragma unroll
    for (int tx = 0; tx < tile_size_x; ++tx) acc[ty][tx] = 0.0f;

  for (int i = 0; i < FILTER_H; ++i) {
#pragma unroll
    for (int j = 0; j < FILTER_W; ++j) {
#if use_cmem
      const float w = d_filter[i * FILTER_W + j];
#else
      const float w = __ldg(filter + i * FILTER_W + j);
#endif
#pragma unroll
      for (int ty = 0; ty < tile_size_y; ++ty) {
#pragma unroll
        for (int tx = 0; tx < tile_size_x; ++tx) {
          const int ly = threadIdx.y + ty * block_size_y;
          const int lx = threadIdx.x + tx * block_size_x;
#if use_shared
          const float v = window[ly + i][lx + j];
#else
          const int y = y0 + ly;
          const int x = x0 + lx;
          // Outputs past the edge are never stored; reading 0 keeps their inputs in bounds.
          const float v = (y < height && x < width) ? in[(y + i) * in_w + x + j] : 0.0f;
#endif
          acc[ty][tx] = fmaf(v, w, acc[ty][tx]);
        }
      }
    }
  }

#pragma unroll
  for (int ty = 0; ty < tile_size_y; ++ty) {
#pragma unroll
    for (int tx = 0; tx < tile_size_x; ++tx) {
      const int y = y0 + threadIdx.y + ty * block_size_y;
      const int x = x0 + threadIdx.x + tx * block_size_x;
      if (y < height && x < width) out[y * width + x] = acc[ty][tx];
    }
  }
}
