#include "kernels/split_heads/split_heads.hpp"
#include "tuner/core/errors.hpp"

namespace ktune {

split_heads::Shape split_heads::shape_of(const Problem& problem) {
  Shape shape{problem.dim("batch"), problem.dim("seq"),      problem.dim("heads"),
              problem.dim("kv_heads"), problem.dim("head_dim"), problem.dim("rope") != 0};
  if (shape.kv_heads == 0) shape.kv_heads = shape.heads;
  if (shape.heads % shape.kv_heads != 0)
    throw InputError("split_heads: kv_heads (" + std::to_string(shape.kv_heads) + ") must divide heads (" +
                     std::to_string(shape.heads) + ")");
  if (shape.head_dim % 2 != 0)
    throw InputError("split_heads: head_dim must be even, got " + std::to_string(shape.head_dim));
  if (problem.dim("rope") > 1)
    throw InputError("split_heads: rope must be 0 (no rotation) or 1 (RoPE on q and k), not " +
                     std::to_string(problem.dim("rope")));
  return shape;
}

void split_heads::reference_split(const Shape& s, const double* qkv, const double* cos, const double* sin,
                                  double* q, double* k, double* v) {
  const std::int64_t half = s.half();
  double* outputs[] = {q, k, v};
  for (std::int64_t b = 0; b < s.batch; ++b)
    for (std::int64_t t = 0; t < s.seq; ++t)
      for (std::int64_t slot = 0; slot < s.slots(); ++slot) {
        const double* x = qkv + ((b * s.seq + t) * s.slots() + slot) * s.head_dim;
        const auto [tensor, offset] = s.destination(b, t, slot);
        double* out = outputs[tensor] + offset;
        if (!s.rope || tensor == 2) {
          for (std::int64_t d = 0; d < s.head_dim; ++d) out[d] = x[d];
          continue;
        }
        for (std::int64_t i = 0; i < half; ++i) {
          const double c = cos[t * half + i], n = sin[t * half + i];
          out[i] = x[i] * c - x[i + half] * n;
          out[i + half] = x[i + half] * c + x[i] * n;
        }
      }
}

namespace {

class SplitHeadsFamily final : public KernelFamily {
 public:
  std::string name() const override { return "split_heads"; }
  std::string summary() const override {
    return "a fused QKV projection [tokens, (heads + 2 kv_heads) * head_dim] split into heads-first q, k, v "
           "[batch, heads, seq, head_dim], q and k rotated by NeoX RoPE when rope = 1";
  }
  std::vector<DimSpec> dims() const override {
    return {{"batch", 1, "sequences"},
            {"seq", 2048, "tokens per sequence (a token's RoPE position is its index in it)"},
            {"heads", 32, "query heads"},
            {"kv_heads", 0, "key/value heads, dividing heads (grouped-query attention); 0: as many as heads", 0},
            {"head_dim", 128, "elements per head (even)"},
            {"rope", 0, "1: rotate q and k by RoPE (cos and sin tables); 0: split only", 0}};
  }
  std::vector<Precision> precisions() const override { return {Precision::fp32, Precision::fp16, Precision::bf16}; }
  std::vector<TensorSpec> tensors(const Problem& problem) const override {
    const auto s = split_heads::shape_of(problem);
    const std::int64_t tokens = s.batch * s.seq;
    // Without rope the tables are not read: one element each keeps the argument list fixed.
    const std::int64_t table = s.rope ? s.seq * s.half() : 1;
    return {{"qkv", tokens * s.slots() * s.head_dim, false},
            {"cos", table, false, -1.0, 1.0},
            {"sin", table, false, -1.0, 1.0},
            {"q", tokens * s.heads * s.head_dim, true},
            {"k", tokens * s.kv_heads * s.head_dim, true},
            {"v", tokens * s.kv_heads * s.head_dim, true}};
  }
  // The rotation's two multiplies and one add per rotated element; a split alone computes nothing.
  double flop_count(const Problem& problem) const override {
    const auto s = split_heads::shape_of(problem);
    return s.rope ? 3.0 * static_cast<double>(s.batch * s.seq) * static_cast<double>((s.heads + s.kv_heads) * s.head_dim)
                  : 0.0;
  }
  void reference(const Problem& problem, HostTensors& tensors) const override {
    const auto named = named_tensors(problem, tensors);
    split_heads::reference_split(split_heads::shape_of(problem), named.at("qkv").data(), named.at("cos").data(),
                                 named.at("sin").data(), named.at("q").data(), named.at("k").data(),
                                 named.at("v").data());
  }
  const CpuKernel* cpu_kernel() const override { return &split_heads_cpu_kernel(); }
  const GpuSource* cuda_source() const override {
    static constexpr GpuSource source{.file = "kernels/split_heads/split_heads.cu",
                                      .entry = "split_heads_kernel",
                                      .portable = true};
    return &source;
  }
  const VulkanShader* vulkan_shader() const override {
    static constexpr VulkanShader shader{.file = "kernels/split_heads/split_heads.comp"};
    return &shader;
  }
};

}  // namespace

const KernelFamily& split_heads_family() {
  static const SplitHeadsFamily family;
  return family;
}

}  // namespace ktune
