// InstanceNorm on the CPU: LayerNorm's row kernel over each (batch, channel) plane, with that
// channel's gamma and beta. Tunables (search_spaces/instance_norm.cpu.json):
//   threads         threads of the pool that take part
//   planes_per_task planes handed to a thread at a time (scheduling granularity)
//   vector_width    float lanes per accumulator (W) of the plane statistics; elements per step of
//                   the normalising loop
//   unroll          independent accumulators of W lanes (U), hiding the add latency
//   stats           "two_pass" or "welford" (kernels/common/cpu_row_stats.hpp)
// Loads convert to float, all arithmetic and accumulation is in float, stores round once.
#include "kernels/common/cpu_dispatch.hpp"
#include "kernels/common/cpu_numeric.hpp"
#include "kernels/common/cpu_row_stats.hpp"
#include "kernels/common/cpu_rows.hpp"
#include "kernels/instance_norm/instance_norm.hpp"
#include "ktune/source_hash/instance_norm_cpu.hpp"

namespace ktune {
namespace {

using cpu::from_float;
using cpu::RowStatsKind;
using cpu::to_float;

template <typename T, RowStatsKind K, int W, int U>
void instance_norm_plane(const T* x, float gamma, float beta, T* out, std::int64_t size) {
  const auto load = [x](std::int64_t i) { return to_float(x[i]); };
  const cpu::RowStats stats = cpu::row_stats<K, W, U>(size, static_cast<float>(kInstanceNormEpsilon), load);
  // Centred first (a mean far from 0 must not cancel), then one multiply-add.
  const float scale = stats.inv_std * gamma;
  std::int64_t i = 0;
  for (; i + W <= size; i += W)
    for (int lane = 0; lane < W; ++lane) out[i + lane] = from_float<T>((to_float(x[i + lane]) - stats.mean) * scale + beta);
  for (; i < size; ++i) out[i] = from_float<T>((to_float(x[i]) - stats.mean) * scale + beta);
}

class InstanceNormCpu final : public CpuKernel {
 public:
  std::string source_hash() const override { return source_hash::instance_norm_cpu; }

  std::function<void()> prepare(const CpuLaunchContext& context) const override {
    const Problem& problem = context.problem;
    const std::int64_t channels = problem.dim("channels");
    const std::int64_t planes = problem.dim("batch") * channels;
    const std::int64_t size = problem.dim("height") * problem.dim("width");
    const cpu::RowSchedule schedule = cpu::RowSchedule::from(context.config, "planes_per_task");
    const std::int64_t vector_width = context.config.get_int("vector_width");
    const std::int64_t unroll = context.config.get_int("unroll");
    const bool welford = cpu::row_stats_kind(context.config) == RowStatsKind::welford;
    return cpu::with_row_storage(problem.precision, [&]<typename T>() {
      using PlaneFn = void (*)(const T*, float, float, T*, std::int64_t);
      const PlaneFn plane_fn = cpu::select_variant<PlaneFn>(
          cpu::kVectorWidths, cpu::kUnrolls, vector_width, unroll, [welford]<int W, int U>() {
            return welford ? &instance_norm_plane<T, RowStatsKind::welford, W, U>
                           : &instance_norm_plane<T, RowStatsKind::two_pass, W, U>;
          });
      const T* x = static_cast<const T*>(context.tensor("x").data);
      const T* gamma = static_cast<const T*>(context.tensor("gamma").data);
      const T* beta = static_cast<const T*>(context.tensor("beta").data);
      T* out = static_cast<T*>(context.tensor("out").data);
      return cpu::launch_rows(context.pool, planes, schedule, [=](std::int64_t p) {
        plane_fn(x + p * size, to_float(gamma[p % channels]), to_float(beta[p % channels]), out + p * size, size);
      });
    });
  }
};

}  // namespace

const CpuKernel& instance_norm_cpu_kernel() {
  static const InstanceNormCpu kernel;
  return kernel;
}

}  // namespace ktune
