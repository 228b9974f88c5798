// RMSNorm + RoPE on the CPU, one row (token) at a time, head by head: a sum of squares over the
// head, then the rotation of its two halves, reading the head again from L1. Tunables
// (search_spaces/rmsnorm_rope.cpu.json):
//   threads, rows_per_task  as for rmsnorm: parallelism and scheduling granularity over rows
//   vector_width           float lanes per step (W): W partial sums in the sum of squares, W
//                          rotated pairs per step of the rotation
//   unroll                 independent groups of W lanes per step (U), hiding the add latency of
//                          the reduction and widening the rotation's step to W x U pairs
#include <cmath>

#include "kernels/common/cpu_dispatch.hpp"
#include "kernels/common/cpu_numeric.hpp"
#include "kernels/common/cpu_rows.hpp"
#include "kernels/rmsnorm_rope/rmsnorm_rope.hpp"
#include "ktune/source_hash/rmsnorm_rope_cpu.hpp"

namespace ktune {
namespace {

using cpu::from_float;
using cpu::to_float;

// Normalised pair (i, i + half) of one head, rotated by (cos[i], sin[i]).
template <typename T>
inline void rotate_pair(const T* __restrict x, const T* __restrict weight, const T* __restrict cos,
                        const T* __restrict sin, T* __restrict out, std::int64_t i, std::int64_t half,
                        float inv_rms) {
  const float a = to_float(x[i]) * inv_rms * to_float(weight[i]);
  const float b = to_float(x[i + half]) * inv_rms * to_float(weight[i + half]);
  const float c = to_float(cos[i]), s = to_float(sin[i]);
  out[i] = from_float<T>(a * c - b * s);
  out[i + half] = from_float<T>(b * c + a * s);
}

template <typename T, int W, int U>
void rmsnorm_rope_row(const T* __restrict x, const T* __restrict weight, const T* __restrict cos,
                      const T* __restrict sin, T* __restrict out, std::int64_t heads, std::int64_t head_dim) {
  const std::int64_t half = head_dim / 2;
  const float inv_dim = 1.0f / static_cast<float>(head_dim);
  for (std::int64_t h = 0; h < heads; ++h) {
    const T* __restrict xh = x + h * head_dim;
    T* __restrict oh = out + h * head_dim;

    float partial[U][W] = {};
    std::int64_t d = 0;
    for (; d + W * U <= head_dim; d += W * U)
      for (int u = 0; u < U; ++u)
        for (int lane = 0; lane < W; ++lane) {
          const float v = to_float(xh[d + u * W + lane]);
          partial[u][lane] += v * v;
        }
    float sum_sq = 0;
    for (int u = 0; u < U; ++u)
      for (int lane = 0; lane < W; ++lane) sum_sq += partial[u][lane];
    for (; d < head_dim; ++d) sum_sq += to_float(xh[d]) * to_float(xh[d]);
    const float inv_rms = 1.0f / std::sqrt(sum_sq * inv_dim + static_cast<float>(kRmsNormRopeEpsilon));

    std::int64_t i = 0;
    for (; i + W * U <= half; i += W * U)
      for (int u = 0; u < U; ++u)
        for (int lane = 0; lane < W; ++lane) rotate_pair(xh, weight, cos, sin, oh, i + u * W + lane, half, inv_rms);
    for (; i < half; ++i) rotate_pair(xh, weight, cos, sin, oh, i, half, inv_rms);
  }
}

class RmsNormRopeCpu final : public CpuKernel {
 public:
  std::string source_hash() const override { return source_hash::rmsnorm_rope_cpu; }

  std::function<void()> prepare(const CpuLaunchContext& context) const override {
    const std::int64_t rows = context.problem.dim("rows");
    const std::int64_t heads = context.problem.dim("heads");
    const std::int64_t head_dim = context.problem.dim("head_dim");
    if (head_dim % 2 != 0) throw UnsupportedConfig("head_dim must be even, got " + std::to_string(head_dim));
    const std::int64_t half = head_dim / 2;
    const std::int64_t width = heads * head_dim;
    const cpu::RowSchedule schedule = cpu::RowSchedule::from(context.config);
    const std::int64_t vector_width = context.config.get_int("vector_width");
    const std::int64_t unroll = context.config.get_int("unroll");
    return cpu::with_row_storage(context.problem.precision, [&]<typename T>() {
      using RowFn = void (*)(const T*, const T*, const T*, const T*, T*, std::int64_t, std::int64_t);
      const RowFn row_fn = cpu::select_variant<RowFn>(
          cpu::kVectorWidths, cpu::kUnrolls, vector_width, unroll,
          []<int W, int U>() { return &rmsnorm_rope_row<T, W, U>; });
      const T* x = static_cast<const T*>(context.tensor("x").data);
      const T* weight = static_cast<const T*>(context.tensor("weight").data);
      const T* cos = static_cast<const T*>(context.tensor("cos").data);
      const T* sin = static_cast<const T*>(context.tensor("sin").data);
      T* out = static_cast<T*>(context.tensor("out").data);
      return cpu::launch_rows(context.pool, rows, schedule, [=](std::int64_t r) {
        row_fn(x + r * width, weight, cos + r * half, sin + r * half, out + r * width, heads, head_dim);
      });
    });
  }
};

}  // namespace

const CpuKernel& rmsnorm_rope_cpu_kernel() {
  static const RmsNormRopeCpu kernel;
  return kernel;
}

}  // namespace ktune
