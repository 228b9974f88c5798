// Residual add + LayerNorm on the CPU. Tunables (search_spaces/residual_layernorm.cpu.json), as
// for layernorm:
//   threads, rows_per_task  parallelism and scheduling granularity
//   vector_width, unroll    W lanes x U accumulators of the row statistics; W elements per step
//                           of the normalising loop
//   stats                   "two_pass" or "welford" (kernels/common/cpu_row_stats.hpp)
// A row's first pass computes s = x + residual in float and writes it, rounded, to `sum`; the
// statistics and normalising passes recompute s from x and residual (bit-identical: one float
// add) rather than reading `sum` back, so LayerNorm sees the unrounded float sum, as the family
// defines. (Writing `sum` inside the first statistics loop instead measured 2-2.5x slower on one
// thread: the possible aliasing of `sum` with the inputs kept that loop from vectorising.)
#include <cmath>

#include "kernels/common/cpu_dispatch.hpp"
#include "kernels/common/cpu_numeric.hpp"
#include "kernels/common/cpu_rows.hpp"
#include "kernels/common/cpu_row_stats.hpp"
#include "kernels/residual_layernorm/residual_layernorm.hpp"
#include "ktune/source_hash/residual_layernorm_cpu.hpp"

namespace ktune {
namespace {

using cpu::from_float;
using cpu::RowStatsKind;
using cpu::to_float;

template <typename T, RowStatsKind K, int W, int U>
void residual_layernorm_row(const T* x, const T* residual, const T* gamma, const T* beta, T* out, T* sum,
                            std::int64_t cols) {
  const auto load = [x, residual](std::int64_t c) { return to_float(x[c]) + to_float(residual[c]); };
  std::int64_t c = 0;
  for (; c + W <= cols; c += W)
    for (int lane = 0; lane < W; ++lane) sum[c + lane] = from_float<T>(load(c + lane));
  for (; c < cols; ++c) sum[c] = from_float<T>(load(c));
  const cpu::RowStats stats = cpu::row_stats<K, W, U>(cols, static_cast<float>(kResidualLayerNormEpsilon), load);
  c = 0;
  for (; c + W <= cols; c += W)
    for (int lane = 0; lane < W; ++lane) {
      const std::int64_t i = c + lane;
      out[i] = from_float<T>((load(i) - stats.mean) * stats.inv_std * to_float(gamma[i]) + to_float(beta[i]));
    }
  for (; c < cols; ++c)
    out[c] = from_float<T>((load(c) - stats.mean) * stats.inv_std * to_float(gamma[c]) + to_float(beta[c]));
}

class ResidualLayerNormCpu final : public CpuKernel {
 public:
  std::string source_hash() const override { return source_hash::residual_layernorm_cpu; }

  std::function<void()> prepare(const CpuLaunchContext& context) const override {
    const cpu::RowLaunch launch = cpu::RowLaunch::from(context);
    const bool welford = cpu::row_stats_kind(context.config) == RowStatsKind::welford;
    return cpu::with_row_storage(context.problem.precision, [&]<typename T>() {
      using RowFn = void (*)(const T*, const T*, const T*, const T*, T*, T*, std::int64_t);
      const RowFn row_fn = cpu::select_variant<RowFn>(
          cpu::kVectorWidths, cpu::kUnrolls, launch.vector_width, launch.unroll, [welford]<int W, int U>() {
            return welford ? &residual_layernorm_row<T, RowStatsKind::welford, W, U>
                           : &residual_layernorm_row<T, RowStatsKind::two_pass, W, U>;
          });
      const T* x = static_cast<const T*>(context.tensor("x").data);
      const T* residual = static_cast<const T*>(context.tensor("residual").data);
      const T* gamma = static_cast<const T*>(context.tensor("gamma").data);
      const T* beta = static_cast<const T*>(context.tensor("beta").data);
      T* out = static_cast<T*>(context.tensor("out").data);
      T* sum = static_cast<T*>(context.tensor("sum").data);
      return cpu::launch_rows(context.pool, launch.rows, launch.schedule, [=](std::int64_t r) {
        const std::int64_t first = r * launch.cols;
        row_fn(x + first, residual + first, gamma, beta, out + first, sum + first, launch.cols);
      });
    });
  }
};

}  // namespace

const CpuKernel& residual_layernorm_cpu_kernel() {
  static const ResidualLayerNormCpu kernel;
  return kernel;
}

}  // namespace ktune
