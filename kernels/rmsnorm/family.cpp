#include <cmath>

#include "kernels/rmsnorm/rmsnorm.hpp"

namespace ktune {
namespace {

class RmsNormFamily final : public KernelFamily {
 public:
  std::string name() const override { return "rmsnorm"; }
  std::string summary() const override {
    return "RMSNorm over the last dim: x / sqrt(mean(x^2) + 1e-6) * weight";
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
            {"weight", cols, false, 0.5, 1.5},
            {"out", rows * cols, true}};
  }
  // Per element: square, accumulate, scale by the inverse RMS, multiply by the weight.
  double flop_count(const Problem& problem) const override {
    return 4.0 * static_cast<double>(problem.dim("rows")) * static_cast<double>(problem.dim("cols"));
  }
  void reference(const Problem& problem, HostTensors& tensors) const override {
    const auto rows = problem.dim("rows"), cols = problem.dim("cols");
    const auto named = named_tensors(problem, tensors);
    const auto& x = named.at("x");
    const auto& weight = named.at("weight");
    auto& out = named.at("out");
    for (std::int64_t r = 0; r < rows; ++r) {
      const double* row = x.data() + r * cols;
      double sum_sq = 0;
      for (std::int64_t c = 0; c < cols; ++c) sum_sq += row[c] * row[c];
      const double inv_rms = 1.0 / std::sqrt(sum_sq / static_cast<double>(cols) + kRmsNormEpsilon);
      for (std::int64_t c = 0; c < cols; ++c) out[r * cols + c] = row[c] * inv_rms * weight[c];
    }
  }
  const CpuKernel* cpu_kernel() const override { return &rmsnorm_cpu_kernel(); }
  const GpuSource* cuda_source() const override {
    static constexpr GpuSource source{.file = "kernels/rmsnorm/rmsnorm.cu",
                                      .entry = "rmsnorm_kernel",
                                      .portable = true};
    return &source;
  }
  const VulkanShader* vulkan_shader() const override {
    static constexpr VulkanShader shader{.file = "kernels/rmsnorm/rmsnorm.comp"};
    return &shader;
  }
};

}  // namespace

const KernelFamily& rmsnorm_family() {
  static const RmsNormFamily family;
  return family;
}

}  // namespace ktune
