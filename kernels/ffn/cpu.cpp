// The MLP block on the CPU: gemm's blocked loop (kernels/gemm/cpu_gemm.hpp) twice, the first
// with the bias and the activation in its epilogue writing the hidden activation in the problem's
// precision (as PyTorch's route stores it), the second reading it with b2 in its epilogue. Both
// take the config's blocking: they are tuned together.
//
// Tunables (search_spaces/ffn.cpu.json): gemm's threads, block_m, block_n, block_k, micro_m,
// micro_n.
#include <memory>
#include <vector>

#include "kernels/ffn/ffn.hpp"
#include "kernels/gemm/cpu_gemm.hpp"
#include "ktune/source_hash/ffn_cpu.hpp"

namespace ktune {
namespace {

template <typename T>
struct FfnRun {
  std::vector<T> hidden;
  std::unique_ptr<cpu_gemm::GemmRun<T>> up, down;
  void operator()() {
    (*up)();
    (*down)();
  }
};

cpu_gemm::Activation activation_of(int activation) {
  switch (activation) {
    case ffn::kGeluTanh: return [](float x) { return ffn::activate<float>(ffn::kGeluTanh, x); };
    case ffn::kSilu: return [](float x) { return ffn::activate<float>(ffn::kSilu, x); };
    default: return [](float x) { return ffn::activate<float>(ffn::kGelu, x); };
  }
}

class FfnCpu final : public CpuKernel {
 public:
  std::string source_hash() const override { return source_hash::ffn_cpu; }

  std::function<void()> prepare(const CpuLaunchContext& context) const override {
    using namespace cpu_gemm;
    MicroKernel micro = nullptr;
    const Blocking blocking = blocking_of(context.config, micro);
    const Problem& problem = context.problem;
    const auto m = problem.dim("m"), k = problem.dim("k"), f = problem.dim("f");
    const int activation = static_cast<int>(problem.dim("activation"));
    std::function<void()> run;
    const bool typed = cpu::with_storage_type(problem.precision, [&]<typename T>() {
      auto state = std::make_shared<FfnRun<T>>();
      state->hidden.resize(static_cast<std::size_t>(m * f));
      const Operands<T> up{static_cast<const T*>(context.tensor("x").data),
                           static_cast<const T*>(context.tensor("w1").data),
                           nullptr,
                           static_cast<const T*>(context.tensor("b1").data),
                           nullptr,
                           state->hidden.data()};
      const Operands<T> down{state->hidden.data(),
                             static_cast<const T*>(context.tensor("w2").data),
                             nullptr,
                             static_cast<const T*>(context.tensor("b2").data),
                             nullptr,
                             static_cast<T*>(context.tensor("y").data)};
      state->up = std::make_unique<GemmRun<T>>(Shape{m, f, k, true, gemm::kBias}, blocking, micro, context.pool, up,
                                               std::nullopt, activation_of(activation));
      state->down = std::make_unique<GemmRun<T>>(Shape{m, k, f, true, gemm::kBias}, blocking, micro, context.pool, down);
      run = [state] { (*state)(); };
    });
    if (!typed) throw UnsupportedConfig("the CPU ffn takes fp32, fp16 or bf16");
    return run;
  }
};

}  // namespace

const CpuKernel& ffn_cpu_kernel() {
  static const FfnCpu kernel;
  return kernel;
}

}  // namespace ktune
