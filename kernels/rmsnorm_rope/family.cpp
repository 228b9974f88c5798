#include "kernels/common/reference_row_stats.hpp"
#include "kernels/rmsnorm_rope/rmsnorm_rope.hpp"
#include "tuner/core/errors.hpp"

namespace ktune {
namespace {

class RmsNormRopeFamily final : public KernelFamily {
 public:
  std::string name() const override { return "rmsnorm_rope"; }
  std::string summary() const override {
    return "RMSNorm per head (over head_dim) then NeoX-style rotary embedding: QK-norm + RoPE";
  }
  std::vector<DimSpec> dims() const override {
    return {{"rows", 2048, "independent rows (tokens; the RoPE position of a row is its index)"},
            {"heads", 32, "attention heads per row"},
            {"head_dim", 128, "normalised and rotated width of one head (even)"}};
  }
  std::vector<Precision> precisions() const override {
    return {Precision::fp32, Precision::fp16, Precision::bf16};
  }
  std::vector<TensorSpec> tensors(const Problem& problem) const override {
    const auto rows = problem.dim("rows"), heads = problem.dim("heads"), head_dim = problem.dim("head_dim");
    return {{"x", rows * heads * head_dim, false},
            {"weight", head_dim, false, 0.5, 1.5},
            {"cos", rows * (head_dim / 2), false, -1.0, 1.0},
            {"sin", rows * (head_dim / 2), false, -1.0, 1.0},
            {"out", rows * heads * head_dim, true}};
  }
  // Per element of x: square and accumulate (2), scale by the inverse RMS and the weight (2), and
  // the rotation's two multiplies and one add (3). The per-head sqrt and division are not counted.
  double flop_count(const Problem& problem) const override {
    return 7.0 * static_cast<double>(problem.dim("rows")) * static_cast<double>(problem.dim("heads")) *
           static_cast<double>(problem.dim("head_dim"));
  }
  void reference(const Problem& problem, HostTensors& tensors) const override {
    const auto rows = problem.dim("rows"), heads = problem.dim("heads"), head_dim = problem.dim("head_dim");
    if (head_dim % 2 != 0)
      throw InputError("rmsnorm_rope: head_dim must be even, got " + std::to_string(head_dim));
    const std::int64_t half = head_dim / 2;
    const auto named = named_tensors(problem, tensors);
    const auto& x = named.at("x");
    const auto& weight = named.at("weight");
    const auto& cos = named.at("cos");
    const auto& sin = named.at("sin");
    auto& out = named.at("out");
    std::vector<double> y(static_cast<std::size_t>(head_dim));
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t h = 0; h < heads; ++h) {
        const std::int64_t base = (r * heads + h) * head_dim;
        const double inv_rms = reference::inverse_rms(x.data() + base, head_dim, kRmsNormRopeEpsilon);
        for (std::int64_t d = 0; d < head_dim; ++d) y[d] = x[base + d] * inv_rms * weight[d];
        for (std::int64_t i = 0; i < half; ++i) {
          const double c = cos[r * half + i], s = sin[r * half + i];
          out[base + i] = y[i] * c - y[i + half] * s;
          out[base + i + half] = y[i + half] * c + y[i] * s;
        }
      }
  }
  const CpuKernel* cpu_kernel() const override { return &rmsnorm_rope_cpu_kernel(); }
  const GpuSource* cuda_source() const override {
    static constexpr GpuSource source{.file = "kernels/rmsnorm_rope/rmsnorm_rope.cu",
                                      .entry = "rmsnorm_rope_kernel",
                                      .portable = true};
    return &source;
  }
  const VulkanShader* vulkan_shader() const override {
    static constexpr VulkanShader shader{.file = "kernels/rmsnorm_rope/rmsnorm_rope.comp"};
    return &shader;
  }
};

}  // namespace

const KernelFamily& rmsnorm_rope_family() {
  static const RmsNormRopeFamily family;
  return family;
}

}  // namespace ktune
