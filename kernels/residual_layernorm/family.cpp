#include "kernels/common/reference_row_stats.hpp"
#include "kernels/common/row_family.hpp"
#include "kernels/residual_layernorm/residual_layernorm.hpp"

namespace ktune {
namespace {

class ResidualLayerNormFamily final : public RowFamily {
 public:
  // Per element: the residual add, then LayerNorm's 7 (accumulate the mean, subtract it, square
  // and accumulate the variance, scale by the inverse standard deviation, multiply by gamma, add
  // beta). Per-row square roots and divisions are not counted.
  ResidualLayerNormFamily()
      : RowFamily("residual_layernorm",
                  "Residual add + LayerNorm: sum = x + residual; out = (sum - mean) / sqrt(var + 1e-5) * gamma + beta",
                  kNormalisedRows, 8.0) {}
  const CpuKernel* cpu_kernel() const override { return &residual_layernorm_cpu_kernel(); }

 protected:
  std::vector<TensorSpec> row_tensors(std::int64_t rows, std::int64_t cols) const override {
    return {{"x", rows * cols, false},
            {"residual", rows * cols, false},
            {"gamma", cols, false, 0.5, 1.5},
            {"beta", cols, false},
            {"out", rows * cols, true},
            {"sum", rows * cols, true}};
  }
  void row_reference(std::int64_t rows, std::int64_t cols,
                     const NamedTensors<std::vector<double>>& named) const override {
    const auto& x = named.at("x");
    const auto& residual = named.at("residual");
    const auto& gamma = named.at("gamma");
    const auto& beta = named.at("beta");
    auto& out = named.at("out");
    auto& sum = named.at("sum");
    // The unrounded sum of the (rounded) inputs; LayerNorm normalises it, not a rounded copy.
    for (std::int64_t i = 0; i < rows * cols; ++i) sum[i] = x[i] + residual[i];
    for (std::int64_t r = 0; r < rows; ++r)
      reference::layernorm_row(sum.data() + r * cols, gamma.data(), beta.data(), out.data() + r * cols, cols,
                               kResidualLayerNormEpsilon);
  }
};

}  // namespace

const KernelFamily& residual_layernorm_family() {
  static const ResidualLayerNormFamily family;
  return family;
}

}  // namespace ktune
