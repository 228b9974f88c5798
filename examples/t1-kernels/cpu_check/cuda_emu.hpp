// A small CPU emulation of the CUDA features the example kernels use, for cpu_check.py: a grid
// runs one block at a time, with one std::thread per CUDA thread; __syncthreads is a barrier of
// the block's threads, __shared__ variables are static (one block lives at a time), __constant__
// ones ordinary globals. Compiled with AddressSanitizer, it finds out-of-bounds accesses; the
// arithmetic is IEEE float as on the GPU (fmaf is fused, -ffp-contract=off keeps the rest apart).
#pragma once
#include <math.h>

#include <algorithm>
#include <barrier>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

struct dim3 {
  unsigned x = 1, y = 1, z = 1;
};
struct uint3 {
  unsigned x = 0, y = 0, z = 0;
};
inline thread_local uint3 threadIdx;
inline uint3 blockIdx;
inline dim3 blockDim, gridDim;
inline std::barrier<>* g_block_barrier = nullptr;

#define __global__
#define __device__
#define __forceinline__ inline
#define __shared__ static
#define __constant__
#define __launch_bounds__(...)
#define __restrict__

inline void __syncthreads() { g_block_barrier->arrive_and_wait(); }
inline float __ldg(const float* p) { return *p; }
inline float __fmul_rn(float a, float b) { volatile float r = a * b; return r; }
inline float __fadd_rn(float a, float b) { volatile float r = a + b; return r; }
inline float __fmaf_rn(float a, float b, float c) { return std::fma(a, b, c); }
struct float2 {
  float x, y;
};
struct alignas(16) float4 {
  float x, y, z, w;
};
inline float2 make_float2(float x, float y) { return {x, y}; }
inline float4 make_float4(float x, float y, float z, float w) { return {x, y, z, w}; }

// Runs `body` (the kernel call) for every thread of every block of the grid.
inline void launch(dim3 grid, dim3 block, const std::function<void()>& body) {
  gridDim = grid;
  blockDim = block;
  const unsigned threads = block.x * block.y * block.z;
  for (unsigned bz = 0; bz < grid.z; ++bz)
    for (unsigned by = 0; by < grid.y; ++by)
      for (unsigned bx = 0; bx < grid.x; ++bx) {
        blockIdx = {bx, by, bz};
        std::barrier<> barrier(threads);
        g_block_barrier = &barrier;
        std::vector<std::thread> running;
        running.reserve(threads);
        for (unsigned t = 0; t < threads; ++t)
          running.emplace_back([&, t] {
            threadIdx = {t % block.x, (t / block.x) % block.y, t / (block.x * block.y)};
            body();
          });
        for (auto& thread : running) thread.join();
      }
}

inline std::vector<float> read_floats(const char* path, std::size_t count) {
  std::vector<float> values(count);
  std::ifstream in(path, std::ios::binary);
  in.read(reinterpret_cast<char*>(values.data()), static_cast<std::streamsize>(count * sizeof(float)));
  if (!in) {
    std::fprintf(stderr, "%s: shorter than %zu floats\n", path, count);
    std::exit(3);
  }
  return values;
}

inline void write_floats(const std::string& path, const std::vector<float>& values) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(values.data()), static_cast<std::streamsize>(values.size() * sizeof(float)));
}
