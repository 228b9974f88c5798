#include <cmath>

#include "kernels/residual_layernorm/residual_layernorm.hpp"

namespace ktune {
namespace {

class ResidualLayerNormFamily final : public KernelFamily {
 public:
  std::string name() const override { return "residual_layernorm"; }
  std::string summary() const override {
    return "Residual add + LayerNorm: sum = x + residual; out = (sum - mean) / sqrt(var + 1e-5) * gamma + beta";
  }
  std::vector<DimSpec> dims() const override {
    return {{"rows", 2048, "independent rows (tokens)"}, {"cols", 4096, "normalised width (hidden size)"}};
  }
  std::vector<Precision> precisions() const override {
    return {Precision::fp32, Precision::fp16, Precision::bf16};
  }
  std::vector<TensorSpec> tensors(const Problem& problem) const override {
    const auto rows = problem.dim("rows"), cols = problem.dim("cols");
    return {{"x", rows * cols, false},
            {"residual", rows * cols, false},
            {"gamma", cols, false, 0.5, 1.5},
            {"beta", cols, false},
            {"out", rows * cols, true},
            {"sum", rows * cols, true}};
  }
  // Per element: the residual add, then LayerNorm's 7 (accumulate the mean, subtract it, square
  // and accumulate the variance, scale by the inverse standard deviation, multiply by gamma, add
  // beta). Per-row square roots and divisions are not counted.
  double flop_count(const Problem& problem) const override {
    return 8.0 * static_cast<double>(problem.dim("rows")) * static_cast<double>(problem.dim("cols"));
  }
  void reference(const Problem& problem, HostTensors& tensors) const override {
    const auto rows = problem.dim("rows"), cols = problem.dim("cols");
    const auto named = named_tensors(problem, tensors);
    const auto& x = named.at("x");
    const auto& residual = named.at("residual");
    const auto& gamma = named.at("gamma");
    const auto& beta = named.at("beta");
    auto& out = named.at("out");
    auto& sum = named.at("sum");
    // The unrounded sum of the (rounded) inputs; LayerNorm normalises it, not a rounded copy.
    for (std::int64_t i = 0; i < rows * cols; ++i) sum[i] = x[i] + residual[i];
    for (std::int64_t r = 0; r < rows; ++r) {
      const double* row = sum.data() + r * cols;
      double total = 0;
      for (std::int64_t c = 0; c < cols; ++c) total += row[c];
      const double mean = total / static_cast<double>(cols);
      double sum_sq = 0;
      for (std::int64_t c = 0; c < cols; ++c) sum_sq += (row[c] - mean) * (row[c] - mean);
      const double inv_std = 1.0 / std::sqrt(sum_sq / static_cast<double>(cols) + kResidualLayerNormEpsilon);
      for (std::int64_t c = 0; c < cols; ++c)
        out[r * cols + c] = (row[c] - mean) * inv_std * gamma[c] + beta[c];
    }
  }
  const CpuKernel* cpu_kernel() const override { return &residual_layernorm_cpu_kernel(); }
  const GpuSource* cuda_source() const override {
    static constexpr GpuSource source{.file = "kernels/residual_layernorm/residual_layernorm.cu",
                                      .entry = "residual_layernorm_kernel",
                                      .portable = true};
    return &source;
  }
  const VulkanShader* vulkan_shader() const override {
    static constexpr VulkanShader shader{.file = "kernels/residual_layernorm/residual_layernorm.comp"};
    return &shader;
  }
};

}  // namespace

const KernelFamily& residual_layernorm_family() {
  static const ResidualLayerNormFamily family;
  return family;
}

}  // namespace ktune
