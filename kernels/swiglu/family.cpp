#include <cmath>

#include "kernels/common/row_family.hpp"
#include "kernels/swiglu/swiglu.hpp"

namespace ktune {
namespace {

class SwiGluFamily final : public RowFamily {
 public:
  // Per output element: negate, exp, add, divide (silu) and one multiply; exp counted as one.
  SwiGluFamily()
      : RowFamily("swiglu", "SwiGLU, fused: silu(gate) * up with gate and up the two halves of x [rows, 2*cols]",
                  kGatedRows, 5.0) {}
  const CpuKernel* cpu_kernel() const override { return &swiglu_cpu_kernel(); }

 protected:
  std::vector<TensorSpec> row_tensors(std::int64_t rows, std::int64_t cols) const override {
    // Gate values up to +-6 exercise both tails of the sigmoid.
    return {{"x", rows * 2 * cols, false, -6.0, 6.0}, {"out", rows * cols, true}};
  }
  void row_reference(std::int64_t rows, std::int64_t cols,
                     const NamedTensors<std::vector<double>>& named) const override {
    for_each_gate(rows, cols, named, [](double gate, double up) { return gate / (1.0 + std::exp(-gate)) * up; });
  }
};

}  // namespace

const KernelFamily& swiglu_family() {
  static const SwiGluFamily family;
  return family;
}

}  // namespace ktune
