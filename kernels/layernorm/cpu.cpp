// LayerNorm on the CPU. Tunables (search_spaces/layernorm.cpu.json):
//   threads        threads of the pool that take part
//   rows_per_task  rows handed to a thread at a time (scheduling granularity)
//   vector_width   float lanes per accumulator (W) of the row statistics; elements per step of
//                  the normalising loop
//   unroll         independent accumulators of W lanes (U), hiding the add latency
//   stats          "two_pass" (sum, then sum of squared deviations) or "welford" (one pass of
//                  Welford updates in W*U lanes); see kernels/common/cpu_row_stats.hpp
// Loads convert to float, all arithmetic and accumulation is in float, stores round once.
#include <cmath>

#include "kernels/common/cpu_dispatch.hpp"
#include "kernels/common/cpu_numeric.hpp"
#include "kernels/common/cpu_rows.hpp"
#include "kernels/common/cpu_row_stats.hpp"
#include "kernels/layernorm/layernorm.hpp"
#include "ktune/source_hash/layernorm_cpu.hpp"

namespace ktune {
namespace {

using cpu::from_float;
using cpu::RowStatsKind;
using cpu::to_float;

template <typename T, RowStatsKind K, int W, int U>
void layernorm_row(const T* x, const T* gamma, const T* beta, T* out, std::int64_t cols) {
  const auto load = [x](std::int64_t c) { return to_float(x[c]); };
  const cpu::RowStats stats = cpu::row_stats<K, W, U>(cols, static_cast<float>(kLayerNormEpsilon), load);
  std::int64_t c = 0;
  for (; c + W <= cols; c += W)
    for (int lane = 0; lane < W; ++lane) {
      const std::int64_t i = c + lane;
      out[i] = from_float<T>((to_float(x[i]) - stats.mean) * stats.inv_std * to_float(gamma[i]) + to_float(beta[i]));
    }
  for (; c < cols; ++c)
    out[c] = from_float<T>((to_float(x[c]) - stats.mean) * stats.inv_std * to_float(gamma[c]) + to_float(beta[c]));
}

class LayerNormCpu final : public CpuKernel {
 public:
  std::string source_hash() const override { return source_hash::layernorm_cpu; }

  std::function<void()> prepare(const CpuLaunchContext& context) const override {
    const cpu::RowLaunch launch = cpu::RowLaunch::from(context);
    const bool welford = cpu::row_stats_kind(context.config) == RowStatsKind::welford;
    return cpu::with_row_storage(context.problem.precision, [&]<typename T>() {
      using RowFn = void (*)(const T*, const T*, const T*, T*, std::int64_t);
      const RowFn row_fn = cpu::select_variant<RowFn>(
          cpu::kVectorWidths, cpu::kUnrolls, launch.vector_width, launch.unroll, [welford]<int W, int U>() {
            return welford ? &layernorm_row<T, RowStatsKind::welford, W, U>
                           : &layernorm_row<T, RowStatsKind::two_pass, W, U>;
          });
      const T* x = static_cast<const T*>(context.tensor("x").data);
      const T* gamma = static_cast<const T*>(context.tensor("gamma").data);
      const T* beta = static_cast<const T*>(context.tensor("beta").data);
      T* out = static_cast<T*>(context.tensor("out").data);
      return cpu::launch_rows(context.pool, launch.rows, launch.schedule, [=](std::int64_t r) {
        row_fn(x + r * launch.cols, gamma, beta, out + r * launch.cols, launch.cols);
      });
    });
  }
};

}  // namespace

const CpuKernel& layernorm_cpu_kernel() {
  static const LayerNormCpu kernel;
  return kernel;
}

}  // namespace ktune
