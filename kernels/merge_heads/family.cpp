#include "kernels/merge_heads/merge_heads.hpp"

namespace ktune {
namespace {

class MergeHeadsFamily final : public KernelFamily {
 public:
  std::string name() const override { return "merge_heads"; }
  std::string summary() const override {
    return "attention's heads-first output [batch, heads, seq, head_dim] as tokens [batch * seq, heads * head_dim], "
           "the layout of the output projection's input";
  }
  std::vector<DimSpec> dims() const override {
    return {{"batch", 1, "sequences"},
            {"heads", 32, "attention heads"},
            {"seq", 2048, "tokens per sequence"},
            {"head_dim", 128, "elements per head"}};
  }
  std::vector<Precision> precisions() const override { return {Precision::fp32, Precision::fp16, Precision::bf16}; }
  std::vector<TensorSpec> tensors(const Problem& problem) const override {
    const auto elements = problem.dim("batch") * problem.dim("heads") * problem.dim("seq") * problem.dim("head_dim");
    return {{"x", elements, false}, {"y", elements, true}};
  }
  double flop_count(const Problem&) const override { return 0; }
  void reference(const Problem& problem, HostTensors& tensors) const override {
    const auto batch = problem.dim("batch"), heads = problem.dim("heads"), seq = problem.dim("seq");
    const auto head_dim = problem.dim("head_dim");
    const auto named = named_tensors(problem, tensors);
    const auto& x = named.at("x");
    auto& y = named.at("y");
    for (std::int64_t b = 0; b < batch; ++b)
      for (std::int64_t h = 0; h < heads; ++h)
        for (std::int64_t s = 0; s < seq; ++s)
          for (std::int64_t d = 0; d < head_dim; ++d)
            y[((b * seq + s) * heads + h) * head_dim + d] = x[((b * heads + h) * seq + s) * head_dim + d];
  }
  const CpuKernel* cpu_kernel() const override { return &merge_heads_cpu_kernel(); }
  const GpuSource* cuda_source() const override {
    static constexpr GpuSource source{.file = "kernels/merge_heads/merge_heads.cu",
                                      .entry = "merge_heads_kernel",
                                      .portable = true};
    return &source;
  }
  const VulkanShader* vulkan_shader() const override {
    static constexpr VulkanShader shader{.file = "kernels/merge_heads/merge_heads.comp"};
    return &shader;
  }
};

}  // namespace

const KernelFamily& merge_heads_family() {
  static const MergeHeadsFamily family;
  return family;
}

}  // namespace ktune
