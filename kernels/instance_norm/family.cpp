#include <algorithm>
#include <vector>

#include "kernels/common/reference_row_stats.hpp"
#include "kernels/instance_norm/instance_norm.hpp"

namespace ktune {
namespace {

class InstanceNormFamily final : public KernelFamily {
 public:
  std::string name() const override { return "instance_norm"; }
  std::string summary() const override {
    return "InstanceNorm2d over each (batch, channel) plane of NCHW x, with a per-channel affine: "
           "(x - mean) / sqrt(var + 1e-5) * gamma[c] + beta[c] (biased var)";
  }
  // The CPU's defaults are a small batch of feature maps; a GPU tunes the style-transfer size.
  std::vector<DimSpec> dims() const override {
    return {{"batch", 2, "images"},
            {"channels", 32, "channels (each with its own gamma and beta)"},
            {"height", 64, "rows of each plane"},
            {"width", 64, "columns of each plane"}};
  }
  std::map<std::string, std::int64_t> gpu_default_shape() const override {
    return {{"batch", 4}, {"channels", 64}, {"height", 256}, {"width", 256}};
  }
  std::optional<Precision> gpu_default_precision() const override { return Precision::bf16; }
  std::vector<Precision> precisions() const override { return {Precision::fp32, Precision::fp16, Precision::bf16}; }
  std::vector<TensorSpec> tensors(const Problem& problem) const override {
    const std::int64_t elements = planes(problem) * plane_size(problem);
    const std::int64_t channels = problem.dim("channels");
    return {{"x", elements, false},
            {"gamma", channels, false, 0.5, 1.5},
            {"beta", channels, false},
            {"out", elements, true}};
  }
  // Per element as LayerNorm: the mean's add, the subtraction, the square and its add, the scale
  // by the inverse standard deviation, gamma's multiply and beta's add (7).
  double flop_count(const Problem& problem) const override {
    return 7.0 * static_cast<double>(planes(problem)) * static_cast<double>(plane_size(problem));
  }
  void reference(const Problem& problem, HostTensors& tensors) const override {
    const auto named = named_tensors(problem, tensors);
    const auto& x = named.at("x");
    const auto& gamma = named.at("gamma");
    const auto& beta = named.at("beta");
    auto& out = named.at("out");
    const std::int64_t channels = problem.dim("channels");
    const std::int64_t size = plane_size(problem);
    std::vector<double> scale(static_cast<std::size_t>(size)), shift(static_cast<std::size_t>(size));
    for (std::int64_t p = 0; p < planes(problem); ++p) {
      // LayerNorm of the plane with gamma and beta constant over it.
      std::fill(scale.begin(), scale.end(), gamma[p % channels]);
      std::fill(shift.begin(), shift.end(), beta[p % channels]);
      reference::layernorm_row(x.data() + p * size, scale.data(), shift.data(), out.data() + p * size, size,
                               kInstanceNormEpsilon);
    }
  }
  const CpuKernel* cpu_kernel() const override { return &instance_norm_cpu_kernel(); }
  const GpuSource* cuda_source() const override { return &cuda_source_; }
  const VulkanShader* vulkan_shader() const override { return &vulkan_shader_; }

 private:
  static std::int64_t planes(const Problem& problem) { return problem.dim("batch") * problem.dim("channels"); }
  static std::int64_t plane_size(const Problem& problem) { return problem.dim("height") * problem.dim("width"); }

  GpuSource cuda_source_{.file = "kernels/instance_norm/instance_norm.cu", .entry = "instance_norm_kernel",
                         .portable = true};
  VulkanShader vulkan_shader_{.file = "kernels/instance_norm/instance_norm.comp"};
};

}  // namespace

const KernelFamily& instance_norm_family() {
  static const InstanceNormFamily family;
  return family;
}

}  // namespace ktune
