#include <cmath>

#include "kernels/layernorm/layernorm.hpp"

namespace ktune {
namespace {

class LayerNormFamily final : public KernelFamily {
 public:
  std::string name() const override { return "layernorm"; }
  std::string summary() const override {
    return "LayerNorm over the last dim: (x - mean) / sqrt(var + 1e-5) * gamma + beta (biased var)";
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
            {"gamma", cols, false, 0.5, 1.5},
            {"beta", cols, false},
            {"out", rows * cols, true}};
  }
  // Per element: accumulate the mean, subtract it, square and accumulate the variance, scale by
  // the inverse standard deviation, multiply by gamma, add beta (7). The per-row square root and
  // divisions are not counted; a two-pass kernel's repeated subtraction is counted once.
  double flop_count(const Problem& problem) const override {
    return 7.0 * static_cast<double>(problem.dim("rows")) * static_cast<double>(problem.dim("cols"));
  }
  void reference(const Problem& problem, HostTensors& tensors) const override {
    const auto rows = problem.dim("rows"), cols = problem.dim("cols");
    const auto named = named_tensors(problem, tensors);
    const auto& x = named.at("x");
    const auto& gamma = named.at("gamma");
    const auto& beta = named.at("beta");
    auto& out = named.at("out");
    for (std::int64_t r = 0; r < rows; ++r) {
      const double* row = x.data() + r * cols;
      double sum = 0;
      for (std::int64_t c = 0; c < cols; ++c) sum += row[c];
      const double mean = sum / static_cast<double>(cols);
      double sum_sq = 0;
      for (std::int64_t c = 0; c < cols; ++c) sum_sq += (row[c] - mean) * (row[c] - mean);
      const double inv_std = 1.0 / std::sqrt(sum_sq / static_cast<double>(cols) + kLayerNormEpsilon);
      for (std::int64_t c = 0; c < cols; ++c)
        out[r * cols + c] = (row[c] - mean) * inv_std * gamma[c] + beta[c];
    }
  }
  const CpuKernel* cpu_kernel() const override { return &layernorm_cpu_kernel(); }
  const GpuSource* cuda_source() const override {
    static constexpr GpuSource source{.file = "kernels/layernorm/layernorm.cu",
                                      .entry = "layernorm_kernel",
                                      .portable = true};
    return &source;
  }
  const VulkanShader* vulkan_shader() const override {
    static constexpr VulkanShader shader{.file = "kernels/layernorm/layernorm.comp"};
    return &shader;
  }
};

}  // namespace

const KernelFamily& layernorm_family() {
  static const LayerNormFamily family;
  return family;
}

}  // namespace ktune
