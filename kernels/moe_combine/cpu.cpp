// MoE combine on the CPU: a task takes chunk_tokens tokens; each token's kept expert rows are
// added, weighted, into a float row (the thread's, reused), then stored once.
//
// Tunables (search_spaces/moe_combine.cpu.json): threads, chunk_tokens.
#include <algorithm>
#include <vector>

#include "kernels/common/cpu_numeric.hpp"
#include "kernels/common/cpu_shared_run.hpp"
#include "kernels/cpu_kernel.hpp"
#include "kernels/moe_combine/moe_combine.hpp"
#include "kernels/thread_pool.hpp"
#include "ktune/source_hash/moe_combine_cpu.hpp"

namespace ktune {
namespace {

struct Plan {
  std::int64_t tokens, top_k, hidden, chunk_tokens;
  int threads;
};

template <typename T>
class MoeCombineRun {
 public:
  MoeCombineRun(Plan plan, const CpuLaunchContext& context)
      : p_(plan), pool_(context.pool),
        expert_out_(static_cast<const T*>(context.tensor("expert_out").data)),
        weights_(static_cast<const float*>(context.tensor("weights").data)),
        rows_(static_cast<const std::int32_t*>(context.tensor("rows").data)),
        y_(static_cast<T*>(context.tensor("y").data)) {}

  void operator()() {
    const std::int64_t chunks = (p_.tokens + p_.chunk_tokens - 1) / p_.chunk_tokens;
    pool_.parallel_for(chunks, p_.threads, [&](std::int64_t chunk) {
      thread_local std::vector<float> sum;
      sum.resize(static_cast<std::size_t>(p_.hidden));
      const std::int64_t first = chunk * p_.chunk_tokens, last = std::min(p_.tokens, first + p_.chunk_tokens);
      for (std::int64_t t = first; t < last; ++t) {
        std::fill(sum.begin(), sum.end(), 0.0f);
        for (std::int64_t k = 0; k < p_.top_k; ++k) {
          const std::int32_t row = rows_[t * p_.top_k + k];
          if (row < 0) continue;  // dropped by the capacity
          const float w = weights_[t * p_.top_k + k];
          const T* from = expert_out_ + static_cast<std::int64_t>(row) * p_.hidden;
          for (std::int64_t h = 0; h < p_.hidden; ++h) sum[static_cast<std::size_t>(h)] += w * cpu::to_float(from[h]);
        }
        T* to = y_ + t * p_.hidden;
        for (std::int64_t h = 0; h < p_.hidden; ++h) to[h] = cpu::from_float<T>(sum[static_cast<std::size_t>(h)]);
      }
    });
  }

 private:
  Plan p_;
  ThreadPool& pool_;
  const T* expert_out_;
  const float* weights_;
  const std::int32_t* rows_;
  T* y_;
};

class MoeCombineCpu final : public CpuKernel {
 public:
  std::string source_hash() const override { return source_hash::moe_combine_cpu; }

  std::function<void()> prepare(const CpuLaunchContext& context) const override {
    const Problem& problem = context.problem;
    const Plan plan{problem.dim("tokens"), problem.dim("top_k"), problem.dim("hidden"),
                    context.config.get_int("chunk_tokens"), static_cast<int>(context.config.get_int("threads"))};
    if (plan.threads < 1 || plan.chunk_tokens < 1) throw UnsupportedConfig("threads and chunk_tokens must be at least 1");
    return cpu::shared_run<MoeCombineRun>(problem.precision, "the CPU MoE combine", plan, context);
  }
};

}  // namespace

const CpuKernel& moe_combine_cpu_kernel() {
  static const MoeCombineCpu kernel;
  return kernel;
}

}  // namespace ktune
