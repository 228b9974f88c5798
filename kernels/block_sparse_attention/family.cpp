#include <algorithm>
#include <cmath>

#include "kernels/block_sparse_attention/block_sparse_attention.hpp"
#include "tuner/core/errors.hpp"

namespace ktune {
namespace block_sparse_attention {

Shape Shape::of(const Problem& problem) {
  Shape s{flash_attention::Shape::of(problem), problem.dim("block"), problem.dim("density_percent"),
          problem.dim("pattern")};
  if (s.density_percent > 100)
    throw InputError("block_sparse_attention: density_percent=" + std::to_string(s.density_percent) +
                     " must be at most 100");
  if (s.pattern > 1)
    throw InputError("block_sparse_attention: pattern=" + std::to_string(s.pattern) +
                     " must be 0 (random blocks) or 1 (sliding window plus global tokens)");
  return s;
}

bool Shape::kept(std::int64_t h, std::int64_t qb, std::int64_t kb) const {
  if (pattern == 0) {
    std::uint64_t x = static_cast<std::uint64_t>((h * 1000003 + qb) * 1000033 + kb) * 0x9e3779b97f4a7c15ull;
    x ^= x >> 29;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 32;
    return static_cast<std::int64_t>(x % 100) < density_percent;
  }
  // The block of keys on query block qb's diagonal (bottom-right aligned, as the causal mask).
  const std::int64_t diagonal = std::clamp<std::int64_t>(
      (qb * block + attention.seq_kv - attention.seq_q) / block, 0, kv_blocks() - 1);
  const std::int64_t window = std::max<std::int64_t>(1, density_percent * kv_blocks() / 100);
  return kb == 0 || (kb <= diagonal && kb > diagonal - window);
}

}  // namespace block_sparse_attention

namespace {

using block_sparse_attention::Shape;

class BlockSparseAttentionFamily final : public KernelFamily {
 public:
  std::string name() const override { return "block_sparse_attention"; }
  std::string summary() const override {
    return "Flash attention forward over a block mask (per head, blocks of `block` queries x keys): blocks that "
           "are off cost nothing; grouped-query, causal option, log-sum-exp";
  }
  // Attention's, then the mask's.
  std::vector<DimSpec> dims() const override {
    std::vector<DimSpec> dims = flash_attention::dims();
    dims.push_back({"block", 128, "query rows and keys per block of the mask (a multiple of the kernel's tiles)", 16, true});
    dims.push_back({"density_percent", 25, "share of the mask's blocks the inputs keep", 0});
    dims.push_back({"pattern", 0, "the inputs' mask: 0 random blocks, 1 a sliding window plus the first block", 0});
    return dims;
  }
  std::optional<Precision> gpu_default_precision() const override { return Precision::bf16; }
  std::map<std::string, std::int64_t> gpu_default_shape() const override {
    return {{"heads", 32}, {"seq_q", 16384}, {"seq_kv", 16384}};
  }
  std::vector<Precision> precisions() const override { return {Precision::fp32, Precision::fp16, Precision::bf16}; }
  std::vector<TensorSpec> tensors(const Problem& problem) const override {
    const Shape s = Shape::of(problem);
    const flash_attention::Shape& a = s.attention;
    // As flash_attention's: q and k in [-2, 2], the scale around 1/sqrt(head_dim) but never it.
    return {{"q", a.batch * a.heads * a.seq_q * a.head_dim, false, -2.0, 2.0},
            {"k", a.batch * a.kv_heads * a.seq_kv * a.head_dim, false, -2.0, 2.0},
            {"v", a.batch * a.kv_heads * a.seq_kv * a.head_dim, false},
            {"o", a.batch * a.heads * a.seq_q * a.head_dim, true},
            {"lse", a.batch * a.heads * a.seq_q, true, -1.0, 1.0, Precision::fp32},
            {"scale", 1, false, 0.5 / std::sqrt(double(a.head_dim)), 1.5 / std::sqrt(double(a.head_dim)), Precision::fp32},
            {"block_mask", a.heads * s.q_blocks() * s.kv_blocks(), false, 0.0, 0.0, Precision::int32}};
  }
  HostTensors make_inputs(const Problem& problem, std::uint64_t seed) const override {
    HostTensors host = KernelFamily::make_inputs(problem, seed);
    const Shape s = Shape::of(problem);
    auto& mask = named_tensors(problem, host).at("block_mask");
    for (std::int64_t h = 0; h < s.attention.heads; ++h)
      for (std::int64_t qb = 0; qb < s.q_blocks(); ++qb)
        for (std::int64_t kb = 0; kb < s.kv_blocks(); ++kb)
          mask[static_cast<std::size_t>((h * s.q_blocks() + qb) * s.kv_blocks() + kb)] = s.kept(h, qb, kb) ? 1.0 : 0.0;
    return host;
  }
  // flash_attention's 4·D per (query, key) pair, over the pairs the mask keeps and the causal
  // bound lets through: the work a kernel that skips what is off must do.
  double flop_count(const Problem& problem) const override {
    const Shape s = Shape::of(problem);
    const flash_attention::Shape& a = s.attention;
    double pairs = 0;
    for (std::int64_t h = 0; h < a.heads; ++h)
      for (std::int64_t qb = 0; qb < s.q_blocks(); ++qb)
        for (std::int64_t kb = 0; kb < s.kv_blocks(); ++kb) {
          if (!s.kept(h, qb, kb)) continue;
          const std::int64_t k0 = kb * s.block, k1 = std::min(a.seq_kv, k0 + s.block);
          for (std::int64_t i = qb * s.block; i < std::min(a.seq_q, (qb + 1) * s.block); ++i)
            pairs += static_cast<double>(std::max<std::int64_t>(0, std::min(k1, a.keys_visible(i)) - k0));
        }
    return 4.0 * static_cast<double>(a.batch) * pairs * static_cast<double>(a.head_dim);
  }
  bool memory_bound() const override { return false; }

  void reference(const Problem& problem, HostTensors& tensors) const override {
    const Shape s = Shape::of(problem);
    const auto named = named_tensors(problem, tensors);
    const auto& mask = named.at("block_mask");
    flash_attention::reference_forward(s.attention, named, [&](std::int64_t h, std::int64_t i, std::int64_t j) {
      return mask[static_cast<std::size_t>((h * s.q_blocks() + i / s.block) * s.kv_blocks() + j / s.block)] != 0;
    });
  }
  const CpuKernel* cpu_kernel() const override { return &block_sparse_attention_cpu_kernel(); }
  std::vector<TensorMapSpec> tensor_maps(const Problem& problem, const Config& config) const override {
    return flash_attention::wgmma_tensor_maps(Shape::of(problem).attention, config);
  }
  const GpuSource* cuda_source() const override {
    static constexpr GpuSource source{.file = "kernels/block_sparse_attention/block_sparse_attention.cu",
                                      .entry = "block_sparse_attention_kernel",
                                      .portable = true};
    return &source;
  }
};

}  // namespace

const KernelFamily& block_sparse_attention_family() {
  static const BlockSparseAttentionFamily family;
  return family;
}

}  // namespace ktune
