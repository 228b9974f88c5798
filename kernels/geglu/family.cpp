#include <cmath>

#include "kernels/geglu/geglu.hpp"

namespace ktune {
namespace {

class GeGluFamily final : public KernelFamily {
 public:
  std::string name() const override { return "geglu"; }
  std::string summary() const override {
    return "GeGLU, fused: gelu(gate) * up (exact erf GELU) with gate and up the two halves of x [rows, 2*cols]";
  }
  std::vector<DimSpec> dims() const override {
    return {{"rows", 2048, "independent rows (tokens)"}, {"cols", 4096, "output width (intermediate size)"}};
  }
  std::vector<Precision> precisions() const override {
    return {Precision::fp32, Precision::fp16, Precision::bf16};
  }
  std::vector<TensorSpec> tensors(const Problem& problem) const override {
    const auto rows = problem.dim("rows"), cols = problem.dim("cols");
    // Gate values up to +-6 exercise both tails of the GELU, past the point (|g| > 4 * sqrt(2))
    // where erf rounds to +-1 in float.
    return {{"x", rows * 2 * cols, false, -6.0, 6.0}, {"out", rows * cols, true}};
  }
  // Per output element: scale by 1/sqrt(2), erf, add 1, multiply by g and by 0.5 (gelu), and one
  // multiply by up; erf counted as one.
  double flop_count(const Problem& problem) const override {
    return 6.0 * static_cast<double>(problem.dim("rows")) * static_cast<double>(problem.dim("cols"));
  }
  void reference(const Problem& problem, HostTensors& tensors) const override {
    const auto rows = problem.dim("rows"), cols = problem.dim("cols");
    const auto named = named_tensors(problem, tensors);
    const auto& x = named.at("x");
    auto& out = named.at("out");
    const double inv_sqrt2 = 1.0 / std::sqrt(2.0);
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t c = 0; c < cols; ++c) {
        const double gate = x[r * 2 * cols + c];
        const double up = x[r * 2 * cols + cols + c];
        out[r * cols + c] = 0.5 * gate * (1.0 + std::erf(gate * inv_sqrt2)) * up;
      }
  }
  const CpuKernel* cpu_kernel() const override { return &geglu_cpu_kernel(); }
  const GpuSource* cuda_source() const override {
    static constexpr GpuSource source{.file = "kernels/geglu/geglu.cu",
                                      .entry = "geglu_kernel",
                                      .portable = true};
    return &source;
  }
  const VulkanShader* vulkan_shader() const override {
    static constexpr VulkanShader shader{.file = "kernels/geglu/geglu.comp"};
    return &shader;
  }
};

}  // namespace

const KernelFamily& geglu_family() {
  static const GeGluFamily family;
  return family;
}

}  // namespace ktune
