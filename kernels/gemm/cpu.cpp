// GEMM on the CPU, the way BLIS structures it: the n dimension in blocks of block_n, k in blocks
// of block_k (one packed panel of B, kept in cache, shared by all threads), and m in blocks of
// block_m handed to the pool's threads, each packing its rows of A. A micro-kernel keeps a
// micro_m x micro_n tile of sums in vector registers over a k block. Inputs are converted to float
// while packing, so fp16 and bf16 cost no more in the inner loop; sums stay in a float buffer
// across k blocks and the epilogue rounds once to the output precision.
//
// Tunables (search_spaces/gemm.cpu.json): threads, block_m, block_n, block_k, micro_m, micro_n.
#include <memory>

#include "kernels/gemm/cpu_gemm.hpp"
#include "ktune/source_hash/gemm_cpu.hpp"

namespace ktune {
namespace {

class GemmCpu final : public CpuKernel {
 public:
  std::string source_hash() const override { return source_hash::gemm_cpu; }

  std::function<void()> prepare(const CpuLaunchContext& context) const override {
    using namespace cpu_gemm;
    MicroKernel micro = nullptr;
    const Blocking blocking = blocking_of(context.config, micro);
    const Problem& problem = context.problem;
    const Shape shape{problem.dim("m"), problem.dim("n"), problem.dim("k"), problem.dim("b_layout") == 0,
                      static_cast<int>(problem.dim("epilogue"))};
    std::function<void()> run;
    const bool typed = cpu::with_any_storage_type(problem.precision, [&]<typename T>() {
      const Operands<T> operands{static_cast<const T*>(context.tensor("a").data),
                                 static_cast<const T*>(context.tensor("b").data),
                                 static_cast<const T*>(context.tensor("c").data),
                                 static_cast<const T*>(context.tensor("bias").data),
                                 static_cast<const T*>(context.tensor("scalars").data),
                                 static_cast<T*>(context.tensor("d").data)};
      run = [state = std::make_shared<GemmRun<T>>(shape, blocking, micro, context.pool, operands)] {
        (*state)();
      };
    });
    if (!typed) throw UnsupportedConfig("the CPU GEMM takes fp32, tf32, fp16, bf16 or fp8_e4m3");
    return run;
  }
};

}  // namespace

const CpuKernel& gemm_cpu_kernel() {
  static const GemmCpu kernel;
  return kernel;
}

}  // namespace ktune
