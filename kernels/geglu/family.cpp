#include <cmath>

#include "kernels/common/row_family.hpp"
#include "kernels/geglu/geglu.hpp"

namespace ktune {
namespace {

class GeGluFamily final : public RowFamily {
 public:
  // Per output element: scale by 1/sqrt(2), erf, add 1, multiply by g and by 0.5 (gelu), and one
  // multiply by up; erf counted as one.
  GeGluFamily()
      : RowFamily("geglu",
                  "GeGLU, fused: gelu(gate) * up (exact erf GELU) with gate and up the two halves of x [rows, 2*cols]",
                  kGatedRows, 6.0) {}
  const CpuKernel* cpu_kernel() const override { return &geglu_cpu_kernel(); }

 protected:
  std::vector<TensorSpec> row_tensors(std::int64_t rows, std::int64_t cols) const override {
    // Gate values up to +-6 exercise both tails of the GELU, past the point (|g| > 4 * sqrt(2))
    // where erf rounds to +-1 in float.
    return {{"x", rows * 2 * cols, false, -6.0, 6.0}, {"out", rows * cols, true}};
  }
  void row_reference(std::int64_t rows, std::int64_t cols,
                     const NamedTensors<std::vector<double>>& named) const override {
    const double inv_sqrt2 = 1.0 / std::sqrt(2.0);
    for_each_gate(rows, cols, named,
                  [inv_sqrt2](double gate, double up) { return 0.5 * gate * (1.0 + std::erf(gate * inv_sqrt2)) * up; });
  }
};

}  // namespace

const KernelFamily& geglu_family() {
  static const GeGluFamily family;
  return family;
}

}  // namespace ktune
