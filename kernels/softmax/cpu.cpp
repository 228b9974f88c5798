// Softmax on the CPU, three passes over a row: max, exp and sum, scale. Tunables
// (search_spaces/softmax.cpu.json):
//   threads, rows_per_task  parallelism and scheduling granularity
//   vector_width, unroll    W lanes x U independent accumulators of the max and the sum; W
//                           elements per step of the scaling loop
//   exp                     "libm" (std::exp per element) or "poly" (cpu::exp_poly, vectorises)
// The exps are kept in float between the passes (in the output row for fp32, in a per-thread
// float row otherwise); all arithmetic is float and the output is rounded once.
#include "kernels/common/cpu_dispatch.hpp"
#include "kernels/common/cpu_numeric.hpp"
#include "kernels/common/cpu_rows.hpp"
#include "kernels/softmax/cpu_softmax_row.hpp"
#include "kernels/softmax/softmax.hpp"
#include "ktune/source_hash/softmax_cpu.hpp"

namespace ktune {
namespace {

using cpu::from_float;
using cpu::SoftmaxExp;

template <typename T, SoftmaxExp E, int W, int U>
void softmax_row(const T* x, T* out, std::int64_t cols) {
  float* e = cpu::softmax_scratch(out, cols);
  const float inv_sum = 1.0f / cpu::softmax_exp_sum<T, E, W, U>(x, e, cols);
  std::int64_t c = 0;
  for (; c + W <= cols; c += W)
    for (int lane = 0; lane < W; ++lane) out[c + lane] = from_float<T>(e[c + lane] * inv_sum);
  for (; c < cols; ++c) out[c] = from_float<T>(e[c] * inv_sum);
}

class SoftmaxCpu final : public CpuKernel {
 public:
  std::string source_hash() const override { return source_hash::softmax_cpu; }

  std::function<void()> prepare(const CpuLaunchContext& context) const override {
    const cpu::RowLaunch launch = cpu::RowLaunch::from(context);
    const bool poly = cpu::poly_choice(context.config, "exp");

    return cpu::with_row_storage(context.problem.precision, [&]<typename T>() {
      using RowFn = void (*)(const T*, T*, std::int64_t);
      const RowFn row_fn = cpu::select_variant<RowFn>(
          cpu::kVectorWidths, cpu::kUnrolls, launch.vector_width, launch.unroll, [poly]<int W, int U>() {
            return poly ? &softmax_row<T, SoftmaxExp::poly, W, U> : &softmax_row<T, SoftmaxExp::libm, W, U>;
          });
      const T* x = static_cast<const T*>(context.tensor("x").data);
      T* out = static_cast<T*>(context.tensor("out").data);
      return cpu::launch_rows(context.pool, launch.rows, launch.schedule, [=](std::int64_t r) {
        row_fn(x + r * launch.cols, out + r * launch.cols, launch.cols);
      });
    });
  }
};

}  // namespace

const CpuKernel& softmax_cpu_kernel() {
  static const SoftmaxCpu kernel;
  return kernel;
}

}  // namespace ktune
