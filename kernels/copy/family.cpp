#include "kernels/copy/copy.hpp"

namespace ktune {
namespace {

class CopyFamily final : public KernelFamily {
 public:
  std::string name() const override { return "copy"; }
  std::string summary() const override {
    return "Copy of n elements: the bandwidth ceiling that bench compares memory-bound kernels with";
  }
  std::vector<DimSpec> dims() const override { return {{"n", 1 << 24, "elements copied"}}; }
  std::vector<Precision> precisions() const override {
    return {Precision::fp32, Precision::fp16, Precision::bf16};
  }
  std::vector<TensorSpec> tensors(const Problem& problem) const override {
    const auto n = problem.dim("n");
    return {{"x", n, false}, {"out", n, true}};
  }
  double flop_count(const Problem&) const override { return 0; }
  void reference(const Problem& problem, HostTensors& tensors) const override {
    const auto named = named_tensors(problem, tensors);
    named.at("out") = named.at("x");
  }
  const CpuKernel* cpu_kernel() const override { return &copy_cpu_kernel(); }
  const GpuSource* cuda_source() const override {
    static constexpr GpuSource source{.file = "kernels/copy/copy.cu",
                                      .entry = "copy_kernel",
                                      .portable = true};
    return &source;
  }
  const VulkanShader* vulkan_shader() const override {
    static constexpr VulkanShader shader{.file = "kernels/copy/copy.comp"};
    return &shader;
  }
};

}  // namespace

const KernelFamily& copy_family() {
  static const CopyFamily family;
  return family;
}

}  // namespace ktune
