// Grouped GEMM on the CPU: gemm's BLIS-style blocked loop (kernels/gemm/cpu_gemm.hpp) over each
// group in turn, on its rows of A and D and its own weight; the pool's threads share each group's
// row blocks. The group sizes are read at every run (a library call may bring new ones), so each
// run prepares its groups' loops then.
//
// Tunables (search_spaces/grouped_gemm.cpu.json): gemm's threads, block_m, block_n, block_k,
// micro_m, micro_n.
#include <memory>
#include <vector>

#include "kernels/gemm/cpu_gemm.hpp"
#include "kernels/grouped_gemm/grouped_gemm.hpp"
#include "ktune/source_hash/grouped_gemm_cpu.hpp"

namespace ktune {
namespace {

class GroupedGemmCpu final : public CpuKernel {
 public:
  std::string source_hash() const override { return source_hash::grouped_gemm_cpu; }

  std::function<void()> prepare(const CpuLaunchContext& context) const override {
    using namespace cpu_gemm;
    MicroKernel micro = nullptr;
    const Blocking blocking = blocking_of(context.config, micro);
    const Problem& problem = context.problem;
    const std::int64_t experts = problem.dim("experts"), n = problem.dim("n"), k = problem.dim("k");
    const auto* sizes = static_cast<const std::int32_t*>(context.tensor("group_sizes").data);
    ThreadPool& pool = context.pool;
    std::function<void()> run;
    const bool typed = cpu::with_storage_type(problem.precision, [&]<typename T>() {
      const T* a = static_cast<const T*>(context.tensor("a").data);
      const T* b = static_cast<const T*>(context.tensor("b").data);
      T* d = static_cast<T*>(context.tensor("d").data);
      run = [=, &pool] {
        std::int64_t row = 0;
        for (std::int64_t g = 0; g < experts; ++g) {
          const std::int64_t rows = sizes[g];
          if (rows > 0) {
            // No C, bias or scalars: epilogue 0 with alpha = 1.
            GemmRun<T> group(Shape{rows, n, k, true, 0}, blocking, micro, pool,
                             Operands<T>{a + row * k, b + g * n * k, nullptr, nullptr, nullptr, d + row * n});
            group();
          }
          row += rows;
        }
      };
    });
    if (!typed) throw UnsupportedConfig("the CPU grouped GEMM takes fp32, fp16 or bf16");
    return run;
  }
};

}  // namespace

const CpuKernel& grouped_gemm_cpu_kernel() {
  static const GroupedGemmCpu kernel;
  return kernel;
}

}  // namespace ktune
