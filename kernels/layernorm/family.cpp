#include "kernels/common/reference_row_stats.hpp"
#include "kernels/common/row_family.hpp"
#include "kernels/layernorm/layernorm.hpp"

namespace ktune {
namespace {

class LayerNormFamily final : public RowFamily {
 public:
  // Per element: accumulate the mean, subtract it, square and accumulate the variance, scale by
  // the inverse standard deviation, multiply by gamma, add beta (7). The per-row square root and
  // divisions are not counted; a two-pass kernel's repeated subtraction is counted once.
  LayerNormFamily()
      : RowFamily("layernorm",
                  "LayerNorm over the last dim: (x - mean) / sqrt(var + 1e-5) * gamma + beta (biased var)",
                  kNormalisedRows, 7.0) {}
  const CpuKernel* cpu_kernel() const override { return &layernorm_cpu_kernel(); }

 protected:
  std::vector<TensorSpec> row_tensors(std::int64_t rows, std::int64_t cols) const override {
    return {{"x", rows * cols, false},
            {"gamma", cols, false, 0.5, 1.5},
            {"beta", cols, false},
            {"out", rows * cols, true}};
  }
  void row_reference(std::int64_t rows, std::int64_t cols,
                     const NamedTensors<std::vector<double>>& named) const override {
    const auto& x = named.at("x");
    const auto& gamma = named.at("gamma");
    const auto& beta = named.at("beta");
    auto& out = named.at("out");
    for (std::int64_t r = 0; r < rows; ++r)
      reference::layernorm_row(x.data() + r * cols, gamma.data(), beta.data(), out.data() + r * cols, cols,
                               kLayerNormEpsilon);
  }
};

}  // namespace

const KernelFamily& layernorm_family() {
  static const LayerNormFamily family;
  return family;
}

}  // namespace ktune
