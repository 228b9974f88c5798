// merge_heads on the CPU, one token (row of y) at a time: each of its heads copied from its
// heads-first place. Tunables (search_spaces/merge_heads.cpu.json): threads and rows_per_task,
// parallelism and scheduling granularity over tokens.
#include <cstring>

#include "kernels/common/cpu_rows.hpp"
#include "kernels/merge_heads/merge_heads.hpp"
#include "ktune/source_hash/merge_heads_cpu.hpp"

namespace ktune {
namespace {

class MergeHeadsCpu final : public CpuKernel {
 public:
  std::string source_hash() const override { return source_hash::merge_heads_cpu; }

  std::function<void()> prepare(const CpuLaunchContext& context) const override {
    const Problem& problem = context.problem;
    const std::int64_t batch = problem.dim("batch"), heads = problem.dim("heads"), seq = problem.dim("seq");
    const std::int64_t head_dim = problem.dim("head_dim");
    const cpu::RowSchedule schedule = cpu::RowSchedule::from(context.config);
    const std::size_t head_bytes = static_cast<std::size_t>(head_dim * element_bytes(problem.precision));
    const auto* x = static_cast<const char*>(context.tensor("x").data);
    auto* y = static_cast<char*>(context.tensor("y").data);
    return cpu::launch_rows(context.pool, batch * seq, schedule, [=](std::int64_t row) {
      const std::int64_t b = row / seq, s = row % seq;
      char* out = y + static_cast<std::size_t>(row * heads) * head_bytes;
      for (std::int64_t h = 0; h < heads; ++h, out += head_bytes)
        std::memcpy(out, x + static_cast<std::size_t>((b * heads + h) * seq + s) * head_bytes, head_bytes);
    });
  }
};

}  // namespace

const CpuKernel& merge_heads_cpu_kernel() {
  static const MergeHeadsCpu kernel;
  return kernel;
}

}  // namespace ktune
