// LayerNorm + Linear on the CPU: gemm's blocked loop (kernels/gemm/cpu_gemm.hpp) with x's rows
// normalised as they are packed, after one parallel pass that takes every row's mean and inverse
// standard deviation. LN(x) is never stored; the epilogue adds the bias.
//
// Tunables (search_spaces/layernorm_linear.cpu.json): gemm's threads, block_m, block_n, block_k,
// micro_m, micro_n.
#include <memory>

#include "kernels/gemm/cpu_gemm.hpp"
#include "kernels/layernorm_linear/layernorm_linear.hpp"
#include "ktune/source_hash/layernorm_linear_cpu.hpp"

namespace ktune {
namespace {

class LayerNormLinearCpu final : public CpuKernel {
 public:
  std::string source_hash() const override { return source_hash::layernorm_linear_cpu; }

  std::function<void()> prepare(const CpuLaunchContext& context) const override {
    using namespace cpu_gemm;
    MicroKernel micro = nullptr;
    const Blocking blocking = blocking_of(context.config, micro);
    const Problem& problem = context.problem;
    const Shape shape{problem.dim("m"), problem.dim("n"), problem.dim("k"), true, gemm::kBias};
    std::function<void()> run;
    const bool typed = cpu::with_storage_type(problem.precision, [&]<typename T>() {
      const Operands<T> operands{static_cast<const T*>(context.tensor("x").data),
                                 static_cast<const T*>(context.tensor("w").data),
                                 nullptr,
                                 static_cast<const T*>(context.tensor("bias").data),
                                 nullptr,
                                 static_cast<T*>(context.tensor("y").data)};
      const RowNormalisation<T> normalisation{static_cast<const T*>(context.tensor("gamma").data),
                                              static_cast<const T*>(context.tensor("beta").data),
                                              static_cast<float>(kLayerNormLinearEpsilon)};
      run = [state = std::make_shared<GemmRun<T>>(shape, blocking, micro, context.pool, operands, normalisation)] {
        (*state)();
      };
    });
    if (!typed) throw UnsupportedConfig("the CPU layernorm_linear takes fp32, fp16 or bf16");
    return run;
  }
};

}  // namespace

const CpuKernel& layernorm_linear_cpu_kernel() {
  static const LayerNormLinearCpu kernel;
  return kernel;
}

}  // namespace ktune
