#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/common/reference_rows.hpp"
#include "kernels/flash_attention/flash_attention.hpp"
#include "tuner/core/errors.hpp"

namespace ktune {
namespace flash_attention {

Shape Shape::of(const Problem& problem) {
  Shape s{problem.dim("batch"),  problem.dim("heads"),    problem.dim("kv_heads"), problem.dim("seq_q"),
          problem.dim("seq_kv"), problem.dim("head_dim"), problem.dim("causal") != 0};
  if (problem.dim("causal") > 1)
    throw InputError(problem.family + ": causal must be 0 or 1, not " + std::to_string(problem.dim("causal")));
  if (s.kv_heads == 0) s.kv_heads = s.heads;
  if (s.kv_heads > s.heads || s.heads % s.kv_heads != 0)
    throw InputError(problem.family + ": kv_heads=" + std::to_string(s.kv_heads) + " must divide heads=" +
                     std::to_string(s.heads) + " (each kv head serves heads/kv_heads query heads)");
  return s;
}

std::vector<DimSpec> dims() {
  return {{"batch", 1, "sequences"},
          {"heads", 16, "query heads"},
          {"kv_heads", 0, "key/value heads, dividing heads (grouped-query attention); 0: as many as heads", 0},
          {"seq_q", 1024, "query length"},
          {"seq_kv", 1024, "key/value length"},
          {"head_dim", 128, "elements per head", 1, true},
          {"causal", 0, "1: query i sees keys up to i + seq_kv - seq_q (bottom-right causal mask)", 0, true}};
}

void reference_forward(const Shape& s, const NamedTensors<std::vector<double>>& named, const KeyFilter& kept) {
  const auto& q = named.at("q");
  const auto& k = named.at("k");
  const auto& v = named.at("v");
  auto& o = named.at("o");
  auto& lse = named.at("lse");
  const double scale = named.at("scale")[0];
  const double fma = static_cast<double>(s.batch * s.heads) * static_cast<double>(s.seq_q) *
                     static_cast<double>(s.seq_kv) * static_cast<double>(s.head_dim) * 2.0;
  // Past this many multiply-adds one query row of every 64 in each head is computed
  // (kernels/common/reference_rows.hpp): seq 16k at 16 heads in full would take host minutes.
  const bool sampled = fma > reference::kFullReferenceFma;
  if (sampled) {
    std::fill(o.begin(), o.end(), std::numeric_limits<double>::quiet_NaN());  // not checked
    std::fill(lse.begin(), lse.end(), std::numeric_limits<double>::quiet_NaN());
  }
  // Rows as (batch * heads + head) * seq_q + i; sampled: one row per group of 64 in each head.
  std::vector<std::int64_t> rows;
  for (std::int64_t bh = 0; bh < s.batch * s.heads; ++bh) reference::append_rows(rows, bh * s.seq_q, s.seq_q, sampled, bh * 11 + 5);
  const std::int64_t group_size = s.heads / s.kv_heads;
  auto one_row = [&](std::int64_t row, std::vector<double>& scores) {
    const std::int64_t bh = row / s.seq_q, i = row % s.seq_q;
    const std::int64_t b = bh / s.heads, h = bh % s.heads;
    const std::int64_t kv_base = (b * s.kv_heads + h / group_size) * s.seq_kv * s.head_dim;
    const double* q_row = q.data() + row * s.head_dim;
    double* o_row = o.data() + row * s.head_dim;
    const std::int64_t keys = s.keys_visible(i);
    auto seen = [&](std::int64_t j) { return !kept || kept(h, i, j); };
    double max = -std::numeric_limits<double>::infinity();
    for (std::int64_t j = 0; j < keys; ++j) {
      if (!seen(j)) continue;
      const double* k_row = k.data() + kv_base + j * s.head_dim;
      double dot = 0;
      for (std::int64_t d = 0; d < s.head_dim; ++d) dot += q_row[d] * k_row[d];
      scores[static_cast<std::size_t>(j)] = dot * scale;
      max = std::max(max, dot * scale);
    }
    std::fill(o_row, o_row + s.head_dim, 0.0);
    if (max == -std::numeric_limits<double>::infinity()) {  // the row sees no key
      lse[static_cast<std::size_t>(row)] = std::numeric_limits<double>::infinity();
      return;
    }
    double sum = 0;
    for (std::int64_t j = 0; j < keys; ++j) {
      if (!seen(j)) continue;
      const double p = std::exp(scores[static_cast<std::size_t>(j)] - max);
      sum += p;
      const double* v_row = v.data() + kv_base + j * s.head_dim;
      for (std::int64_t d = 0; d < s.head_dim; ++d) o_row[d] += p * v_row[d];
    }
    for (std::int64_t d = 0; d < s.head_dim; ++d) o_row[d] /= sum;
    lse[static_cast<std::size_t>(row)] = max + std::log(sum);
  };
  reference::for_each_row(rows, static_cast<std::size_t>(s.seq_kv), one_row);
}

std::vector<TensorMapSpec> wgmma_tensor_maps(const Shape& s, const Config& config) {
  if (!config.has("path") || to_string(config.at("path")) != "wgmma") return {};
  const int box_q = static_cast<int>(config.get_int("block_q")), box_kv = static_cast<int>(config.get_int("block_kv"));
  return {{0, s.batch * s.heads * s.seq_q, s.head_dim, box_q, 64, 128},
          {1, s.batch * s.kv_heads * s.seq_kv, s.head_dim, box_kv, 64, 128},
          {2, s.batch * s.kv_heads * s.seq_kv, s.head_dim, box_kv, 64, 128}};
}

}  // namespace flash_attention

namespace {

using flash_attention::Shape;

class FlashAttentionFamily final : public KernelFamily {
 public:
  std::string name() const override { return "flash_attention"; }
  std::string summary() const override {
    return "Attention forward O = softmax(scale QKᵀ) V with log-sum-exp (scale an input, 1/sqrt(d) by "
           "default), tiled with an online softmax; grouped-query, causal (bottom-right)";
  }
  std::vector<DimSpec> dims() const override { return flash_attention::dims(); }
  // 32 heads of 128 over 2048 tokens, in bf16 (the tensor-core paths; fp32 runs only the
  // portable one).
  std::optional<Precision> gpu_default_precision() const override { return Precision::bf16; }
  std::map<std::string, std::int64_t> gpu_default_shape() const override {
    return {{"heads", 32}, {"seq_q", 2048}, {"seq_kv", 2048}};
  }
  std::vector<Precision> precisions() const override { return {Precision::fp32, Precision::fp16, Precision::bf16}; }
  std::vector<TensorSpec> tensors(const Problem& problem) const override {
    const Shape s = Shape::of(problem);
    // q and k in [-2, 2]: scores then spread over several units, so the softmax is far from
    // uniform and a kernel that gets the maximum, the scale or the mask wrong is visibly off.
    return {{"q", s.batch * s.heads * s.seq_q * s.head_dim, false, -2.0, 2.0},
            {"k", s.batch * s.kv_heads * s.seq_kv * s.head_dim, false, -2.0, 2.0},
            {"v", s.batch * s.kv_heads * s.seq_kv * s.head_dim, false},
            {"o", s.batch * s.heads * s.seq_q * s.head_dim, true},
            {"lse", s.batch * s.heads * s.seq_q, true, -1.0, 1.0, Precision::fp32},
            // Around the usual 1/sqrt(head_dim), never exactly it: a kernel that hard-codes the
            // default scale instead of reading this one fails.
            {"scale", 1, false, 0.5 / std::sqrt(double(s.head_dim)), 1.5 / std::sqrt(double(s.head_dim)), Precision::fp32}};
  }
  // 4·B·H·Nq·Nkv·D (two matrix products), halved when causal: the convention of the
  // FlashAttention papers and of the baselines this is compared with.
  double flop_count(const Problem& problem) const override {
    const Shape s = Shape::of(problem);
    const double full = 4.0 * static_cast<double>(s.batch * s.heads) * static_cast<double>(s.seq_q) *
                        static_cast<double>(s.seq_kv) * static_cast<double>(s.head_dim);
    return s.causal ? full / 2 : full;
  }
  bool memory_bound() const override { return false; }

  void reference(const Problem& problem, HostTensors& tensors) const override {
    flash_attention::reference_forward(Shape::of(problem), named_tensors(problem, tensors));
  }

  // Starting tiles for GPUs not measured here: what the published kernels of each generation use.
  std::vector<ArchitectureDefault> architecture_defaults() const override {
    const auto tiles = [](std::int64_t q, std::int64_t kv, std::int64_t d) {
      return std::vector<std::pair<std::string, std::int64_t>>{{"block_q", q}, {"block_kv", kv}, {"head_dim", d}};
    };
    return {{"ampere", "fp16", tiles(128, 128, 64)},
            {"hopper", "fp16", tiles(128, 256, 128)},
            {"rdna3", "fp16", tiles(64, 64, 64)},
            {"apple", "fp16", tiles(64, 64, 64)},
            {"fallback", "fp32", tiles(32, 32, 64)}};
  }

  const CpuKernel* cpu_kernel() const override { return &flash_attention_cpu_kernel(); }
  const GpuSource* cuda_source() const override {
    static constexpr GpuSource source{.file = "kernels/flash_attention/flash_attention.cu",
                                      .entry = "flash_attention_kernel",
                                      .portable = true};
    return &source;
  }
  // The portable SIMT path in GLSL (kernels/flash_attention/flash_attention.comp).
  const VulkanShader* vulkan_shader() const override {
    static constexpr VulkanShader shader{.file = "kernels/flash_attention/flash_attention.comp"};
    return &shader;
  }
  // The wgmma path loads q, k and v with TMA: each [rows, head_dim] matrix flattened over batch
  // and heads, in boxes of 64 head elements (128 bytes, the swizzle wgmma reads) by the block's
  // query rows or its keys per stage.
  std::vector<TensorMapSpec> tensor_maps(const Problem& problem, const Config& config) const override {
    return flash_attention::wgmma_tensor_maps(Shape::of(problem), config);
  }
};

}  // namespace

const KernelFamily& flash_attention_family() {
  static const FlashAttentionFamily family;
  return family;
}

}  // namespace ktune
