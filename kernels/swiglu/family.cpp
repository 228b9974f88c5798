#include <cmath>

#include "kernels/swiglu/swiglu.hpp"

namespace ktune {
namespace {

class SwiGluFamily final : public KernelFamily {
 public:
  std::string name() const override { return "swiglu"; }
  std::string summary() const override {
    return "SwiGLU, fused: silu(gate) * up with gate and up the two halves of x [rows, 2*cols]";
  }
  std::vector<DimSpec> dims() const override {
    return {{"rows", 2048, "independent rows (tokens)"}, {"cols", 4096, "output width (intermediate size)"}};
  }
  std::vector<Precision> precisions() const override {
    return {Precision::fp32, Precision::fp16, Precision::bf16};
  }
  std::vector<TensorSpec> tensors(const Problem& problem) const override {
    const auto rows = problem.dim("rows"), cols = problem.dim("cols");
    // Gate values up to +-6 exercise both tails of the sigmoid.
    return {{"x", rows * 2 * cols, false, -6.0, 6.0}, {"out", rows * cols, true}};
  }
  // Per output element: negate, exp, add, divide (silu) and one multiply; exp counted as one.
  double flop_count(const Problem& problem) const override {
    return 5.0 * static_cast<double>(problem.dim("rows")) * static_cast<double>(problem.dim("cols"));
  }
  void reference(const Problem& problem, HostTensors& tensors) const override {
    const auto rows = problem.dim("rows"), cols = problem.dim("cols");
    const auto named = named_tensors(problem, tensors);
    const auto& x = named.at("x");
    auto& out = named.at("out");
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t c = 0; c < cols; ++c) {
        const double gate = x[r * 2 * cols + c];
        const double up = x[r * 2 * cols + cols + c];
        out[r * cols + c] = gate / (1.0 + std::exp(-gate)) * up;
      }
  }
  const CpuKernel* cpu_kernel() const override { return &swiglu_cpu_kernel(); }
  const GpuSource* cuda_source() const override {
    static constexpr GpuSource source{.file = "kernels/swiglu/swiglu.cu",
                                      .entry = "swiglu_kernel",
                                      .portable = true};
    return &source;
  }
  const VulkanShader* vulkan_shader() const override {
    static constexpr VulkanShader shader{.file = "kernels/swiglu/swiglu.comp"};
    return &shader;
  }
};

}  // namespace

const KernelFamily& swiglu_family() {
  static const SwiGluFamily family;
  return family;
}

}  // namespace ktune
