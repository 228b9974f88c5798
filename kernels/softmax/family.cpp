#include <algorithm>
#include <cmath>

#include "kernels/softmax/softmax.hpp"

namespace ktune {
namespace {

class SoftmaxFamily final : public KernelFamily {
 public:
  std::string name() const override { return "softmax"; }
  std::string summary() const override {
    return "Softmax over the last dim, stable: exp(x - max) / sum(exp(x - max))";
  }
  std::vector<DimSpec> dims() const override {
    return {{"rows", 2048, "independent rows (e.g. batch * heads * queries)"},
            {"cols", 4096, "softmax width (e.g. keys)"}};
  }
  std::vector<Precision> precisions() const override {
    return {Precision::fp32, Precision::fp16, Precision::bf16};
  }
  std::vector<TensorSpec> tensors(const Problem& problem) const override {
    const auto rows = problem.dim("rows"), cols = problem.dim("cols");
    // Logits in [-8, 8]: the row's terms span e^16, so max subtraction and the exp tails matter.
    return {{"x", rows * cols, false, -8.0, 8.0}, {"out", rows * cols, true}};
  }
  // Per element: compare for the max, subtract it, exp (counted as one), accumulate the sum,
  // multiply by the inverse sum (5). The per-row division is not counted.
  double flop_count(const Problem& problem) const override {
    return 5.0 * static_cast<double>(problem.dim("rows")) * static_cast<double>(problem.dim("cols"));
  }
  void reference(const Problem& problem, HostTensors& tensors) const override {
    const auto rows = problem.dim("rows"), cols = problem.dim("cols");
    const auto named = named_tensors(problem, tensors);
    const auto& x = named.at("x");
    auto& out = named.at("out");
    for (std::int64_t r = 0; r < rows; ++r) {
      const double* row = x.data() + r * cols;
      double max = row[0];
      for (std::int64_t c = 1; c < cols; ++c) max = std::max(max, row[c]);
      double sum = 0;
      for (std::int64_t c = 0; c < cols; ++c) sum += std::exp(row[c] - max);
      for (std::int64_t c = 0; c < cols; ++c) out[r * cols + c] = std::exp(row[c] - max) / sum;
    }
  }
  const CpuKernel* cpu_kernel() const override { return &softmax_cpu_kernel(); }
  const GpuSource* cuda_source() const override {
    static constexpr GpuSource source{.file = "kernels/softmax/softmax.cu",
                                      .entry = "softmax_kernel",
                                      .portable = true};
    return &source;
  }
  const VulkanShader* vulkan_shader() const override {
    static constexpr VulkanShader shader{.file = "kernels/softmax/softmax.comp"};
    return &shader;
  }
};

}  // namespace

const KernelFamily& softmax_family() {
  static const SoftmaxFamily family;
  return family;
}

}  // namespace ktune
