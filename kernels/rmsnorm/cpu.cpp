// RMSNorm on the CPU. Tunables (search_spaces/rmsnorm.cpu.json):
//   threads        threads of the pool that take part
//   rows_per_task  rows handed to a thread at a time (scheduling granularity)
//   vector_width   float lanes per accumulator (W); the sum of squares keeps W partial sums so
//                  the reduction vectorises without reassociating a single running sum
//   unroll         independent accumulators of W lanes (U), hiding the add latency
#include <cmath>

#include "kernels/common/cpu_dispatch.hpp"
#include "kernels/common/cpu_numeric.hpp"
#include "kernels/common/cpu_rows.hpp"
#include "kernels/rmsnorm/rmsnorm.hpp"
#include "ktune/source_hash/rmsnorm_cpu.hpp"

namespace ktune {
namespace {

using cpu::from_float;
using cpu::to_float;

template <typename T, int W, int U>
void rmsnorm_row(const T* x, const T* weight, T* out, std::int64_t cols) {
  float partial[U][W] = {};
  std::int64_t c = 0;
  for (; c + W * U <= cols; c += W * U)
    for (int u = 0; u < U; ++u)
      for (int lane = 0; lane < W; ++lane) {
        const float v = to_float(x[c + u * W + lane]);
        partial[u][lane] += v * v;
      }
  float sum_sq = 0;
  for (int u = 0; u < U; ++u)
    for (int lane = 0; lane < W; ++lane) sum_sq += partial[u][lane];
  for (; c < cols; ++c) sum_sq += to_float(x[c]) * to_float(x[c]);

  const float inv_rms = 1.0f / std::sqrt(sum_sq / static_cast<float>(cols) + static_cast<float>(kRmsNormEpsilon));
  c = 0;
  for (; c + W <= cols; c += W)
    for (int lane = 0; lane < W; ++lane)
      out[c + lane] = from_float<T>(to_float(x[c + lane]) * inv_rms * to_float(weight[c + lane]));
  for (; c < cols; ++c) out[c] = from_float<T>(to_float(x[c]) * inv_rms * to_float(weight[c]));
}

class RmsNormCpu final : public CpuKernel {
 public:
  std::string source_hash() const override { return source_hash::rmsnorm_cpu; }

  std::function<void()> prepare(const CpuLaunchContext& context) const override {
    const cpu::RowLaunch launch = cpu::RowLaunch::from(context);
    return cpu::with_row_storage(context.problem.precision, [&]<typename T>() {
      using RowFn = void (*)(const T*, const T*, T*, std::int64_t);
      const RowFn row_fn = cpu::select_variant<RowFn>(
          cpu::kVectorWidths, cpu::kUnrolls, launch.vector_width, launch.unroll,
          []<int W, int U>() { return &rmsnorm_row<T, W, U>; });
      const T* x = static_cast<const T*>(context.tensor("x").data);
      const T* weight = static_cast<const T*>(context.tensor("weight").data);
      T* out = static_cast<T*>(context.tensor("out").data);
      return cpu::launch_rows(context.pool, launch.rows, launch.schedule, [=](std::int64_t r) {
        row_fn(x + r * launch.cols, weight, out + r * launch.cols, launch.cols);
      });
    });
  }
};

}  // namespace

const CpuKernel& rmsnorm_cpu_kernel() {
  static const RmsNormCpu kernel;
  return kernel;
}

}  // namespace ktune
