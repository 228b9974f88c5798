#include <algorithm>
#include <cmath>

#include "kernels/common/philox.hpp"
#include "kernels/softmax_dropout/softmax_dropout.hpp"

namespace ktune {
namespace {

class SoftmaxDropoutFamily final : public KernelFamily {
 public:
  std::string name() const override { return "softmax_dropout"; }
  std::string summary() const override {
    return "Softmax over the last dim + dropout (p = 0.1, Philox4x32-10 mask with 16 bits per element, seed 0x5eed, offset 0)";
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
    return {{"x", rows * cols, false, -8.0, 8.0}, {"out", rows * cols, true}};
  }
  // Per element: softmax's 5 (compare for the max, subtract it, exp counted as one, accumulate
  // the sum, multiply by the inverse sum) and the dropout scale (1). The per-row division and the
  // integer work of the random number generator are not counted.
  double flop_count(const Problem& problem) const override {
    return 6.0 * static_cast<double>(problem.dim("rows")) * static_cast<double>(problem.dim("cols"));
  }
  void reference(const Problem& problem, HostTensors& tensors) const override {
    const auto rows = problem.dim("rows"), cols = problem.dim("cols");
    const auto named = named_tensors(problem, tensors);
    const auto& x = named.at("x");
    auto& out = named.at("out");
    const double scale = 1.0 / (1.0 - kSoftmaxDropoutP);
    for (std::int64_t r = 0; r < rows; ++r) {
      const double* row = x.data() + r * cols;
      double max = row[0];
      for (std::int64_t c = 1; c < cols; ++c) max = std::max(max, row[c]);
      double sum = 0;
      for (std::int64_t c = 0; c < cols; ++c) sum += std::exp(row[c] - max);
      for (std::int64_t c = 0; c < cols; ++c) {
        const auto i = static_cast<std::uint64_t>(r * cols + c);
        const std::uint32_t bits = philox::element_bits(kSoftmaxDropoutSeed, kSoftmaxDropoutOffset, i);
        // u and the comparison in double: the kernels compare in float and must agree exactly.
        const double u = static_cast<double>(bits) / 65536.0;
        out[r * cols + c] = u >= kSoftmaxDropoutP ? std::exp(row[c] - max) / sum * scale : 0.0;
      }
    }
  }
  const CpuKernel* cpu_kernel() const override { return &softmax_dropout_cpu_kernel(); }
  const GpuSource* cuda_source() const override {
    static constexpr GpuSource source{.file = "kernels/softmax_dropout/softmax_dropout.cu",
                                      .entry = "softmax_dropout_kernel",
                                      .portable = true};
    return &source;
  }
  const VulkanShader* vulkan_shader() const override {
    static constexpr VulkanShader shader{.file = "kernels/softmax_dropout/softmax_dropout.comp"};
    return &shader;
  }
};

}  // namespace

const KernelFamily& softmax_dropout_family() {
  static const SoftmaxDropoutFamily family;
  return family;
}

}  // namespace ktune
