#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/common/reference_rows.hpp"
#include "kernels/flash_attention/flash_attention.hpp"
#include "kernels/flash_attention_backward/flash_attention_backward.hpp"

namespace ktune {
namespace {

using flash_attention::Shape;
// q and k are drawn uniform in [-kQk, kQk], as the forward's (its scores span a few units).
constexpr double kQk = 2.0;

// Multiply-adds of one pass over every (query, key) pair and head element.
double pair_fma(const Shape& s) {
  return static_cast<double>(s.batch * s.heads) * static_cast<double>(s.seq_q) * static_cast<double>(s.seq_kv) *
         static_cast<double>(s.head_dim);
}

class FlashAttentionBackwardFamily final : public KernelFamily {
 public:
  std::string name() const override { return "flash_attention_backward"; }
  std::string summary() const override {
    return "Attention backward: dq, dk, dv from q, k, v, o, dout (the gradient of o) and the forward's log-sum-exp, the probabilities "
           "recomputed tile by tile; grouped-query (dk, dv summed over a group), causal (bottom-right)";
  }
  std::vector<DimSpec> dims() const override { return flash_attention::dims(); }
  std::optional<Precision> gpu_default_precision() const override { return Precision::bf16; }
  std::map<std::string, std::int64_t> gpu_default_shape() const override {
    return {{"heads", 32}, {"seq_q", 2048}, {"seq_kv", 2048}};
  }
  std::vector<Precision> precisions() const override { return {Precision::fp32, Precision::fp16, Precision::bf16}; }
  std::vector<TensorSpec> tensors(const Problem& problem) const override {
    const Shape s = Shape::of(problem);
    const std::int64_t rows = s.batch * s.heads * s.seq_q * s.head_dim, keys = s.batch * s.kv_heads * s.seq_kv * s.head_dim;
    // The scale around 1/sqrt(head_dim) but never it, as the forward's.
    return {{"q", rows, false, -kQk, kQk},
            {"k", keys, false, -kQk, kQk},
            {"v", keys, false},
            {"o", rows, false},
            {"dout", rows, false},
            {"lse", s.batch * s.heads * s.seq_q, false, 0.0, 1.0, Precision::fp32},
            {"scale", 1, false, 0.5 / std::sqrt(double(s.head_dim)), 1.5 / std::sqrt(double(s.head_dim)), Precision::fp32},
            {"dq", rows, true},
            {"dk", keys, true},
            {"dv", keys, true}};
  }
  // o and lse from the forward reference where it is cheap; else each row's lse is what the
  // log-sum-exp of these random inputs comes to: a score scale·q·k over keys uniform in
  // [-kQk, kQk] is near normal with variance scale²·|q|²·kQk²/3, so the sum of exp over n keys is
  // about n·exp(variance / 2). Probabilities then sum to about 1 and the gradients have the size
  // they have in training: an upper bound (|q|₁·max|k|) made them ~e^-50, zeros in fp16.
  HostTensors make_inputs(const Problem& problem, std::uint64_t seed) const override {
    HostTensors host = KernelFamily::make_inputs(problem, seed);
    const Shape s = Shape::of(problem);
    const auto named = named_tensors(problem, host);
    if (2.0 * pair_fma(s) <= reference::kFullReferenceFma) {
      flash_attention::reference_forward(s, named);
      return host;
    }
    const auto& q = named.at("q");
    auto& lse = named.at("lse");
    const double scale = named.at("scale")[0];
    for (std::int64_t row = 0; row < s.batch * s.heads * s.seq_q; ++row) {
      const std::int64_t keys = s.keys_visible(row % s.seq_q);
      double squares = 0;
      for (std::int64_t d = 0; d < s.head_dim; ++d)
        squares += q[static_cast<std::size_t>(row * s.head_dim + d)] * q[static_cast<std::size_t>(row * s.head_dim + d)];
      const double variance = scale * scale * squares * kQk * kQk / 3.0;
      lse[static_cast<std::size_t>(row)] =
          keys == 0 ? std::numeric_limits<double>::infinity() : std::log(double(keys)) + variance / 2.0;
    }
    return host;
  }
  // The FlashAttention papers' convention: 2.5 times the forward's 4·B·H·Nq·Nkv·D (five matrix
  // products), halved when causal.
  double flop_count(const Problem& problem) const override {
    const Shape s = Shape::of(problem);
    return 10.0 * pair_fma(s) / (s.causal ? 2.0 : 1.0);
  }
  bool memory_bound() const override { return false; }

  void reference(const Problem& problem, HostTensors& tensors) const override {
    const Shape s = Shape::of(problem);
    const auto named = named_tensors(problem, tensors);
    const auto& q = named.at("q");
    const auto& k = named.at("k");
    const auto& v = named.at("v");
    const auto& o = named.at("o");
    const auto& dout = named.at("dout");
    const auto& lse = named.at("lse");
    auto& dq = named.at("dq");
    auto& dk = named.at("dk");
    auto& dv = named.at("dv");
    const double scale = named.at("scale")[0];
    const std::int64_t D = s.head_dim, group = s.heads / s.kv_heads;
    const bool sampled = 3.0 * pair_fma(s) > reference::kFullReferenceFma;
    for (auto* out : {&dq, &dk, &dv})
      std::fill(out->begin(), out->end(), sampled ? std::numeric_limits<double>::quiet_NaN() : 0.0);
    // D_i = dout_i · o_i for every query row (b * heads + h) * seq_q + i.
    std::vector<double> delta(static_cast<std::size_t>(s.batch * s.heads * s.seq_q));
    for (std::size_t row = 0; row < delta.size(); ++row) {
      double sum = 0;
      for (std::int64_t d = 0; d < D; ++d) sum += dout[row * D + d] * o[row * D + d];
      delta[row] = sum;
    }
    auto q_row = [&](std::int64_t b, std::int64_t h, std::int64_t i) { return (b * s.heads + h) * s.seq_q + i; };
    auto kv_row = [&](std::int64_t b, std::int64_t h, std::int64_t j) {
      return (b * s.kv_heads + h / group) * s.seq_kv + j;
    };
    // P_ij and dS_ij of query row qr and key row kr.
    auto pair = [&](std::int64_t qr, std::int64_t kr, double& p, double& ds) {
      double dot = 0, dp = 0;
      for (std::int64_t d = 0; d < D; ++d) {
        dot += q[static_cast<std::size_t>(qr * D + d)] * k[static_cast<std::size_t>(kr * D + d)];
        dp += dout[static_cast<std::size_t>(qr * D + d)] * v[static_cast<std::size_t>(kr * D + d)];
      }
      p = std::exp(dot * scale - lse[static_cast<std::size_t>(qr)]);  // 0 for lse = +inf
      ds = p * (dp - delta[static_cast<std::size_t>(qr)]);
    };
    // dq: each (sampled) query row over the keys it sees.
    std::vector<std::int64_t> rows;
    for (std::int64_t bh = 0; bh < s.batch * s.heads; ++bh)
      reference::append_rows(rows, bh * s.seq_q, s.seq_q, sampled, bh * 11 + 5);
    reference::for_each_row(rows, 0, [&](std::int64_t qr, std::vector<double>&) {
      const std::int64_t bh = qr / s.seq_q, i = qr % s.seq_q, b = bh / s.heads, h = bh % s.heads;
      double* out = dq.data() + qr * D;
      std::fill(out, out + D, 0.0);
      for (std::int64_t j = 0; j < s.keys_visible(i); ++j) {
        double p, ds;
        pair(qr, kv_row(b, h, j), p, ds);
        for (std::int64_t d = 0; d < D; ++d) out[d] += scale * ds * k[static_cast<std::size_t>(kv_row(b, h, j) * D + d)];
      }
    });
    // dk, dv: each (sampled) key row over the query rows of its group that see it.
    rows.clear();
    for (std::int64_t bk = 0; bk < s.batch * s.kv_heads; ++bk)
      reference::append_rows(rows, bk * s.seq_kv, s.seq_kv, sampled, bk * 13 + 3);
    reference::for_each_row(rows, 0, [&](std::int64_t kr, std::vector<double>&) {
      const std::int64_t bk = kr / s.seq_kv, j = kr % s.seq_kv, b = bk / s.kv_heads, kh = bk % s.kv_heads;
      double* dk_out = dk.data() + kr * D;
      double* dv_out = dv.data() + kr * D;
      std::fill(dk_out, dk_out + D, 0.0);
      std::fill(dv_out, dv_out + D, 0.0);
      for (std::int64_t h = kh * group; h < (kh + 1) * group; ++h)
        for (std::int64_t i = 0; i < s.seq_q; ++i) {
          if (j >= s.keys_visible(i)) continue;
          double p, ds;
          const std::int64_t qr = q_row(b, h, i);
          pair(qr, kr, p, ds);
          for (std::int64_t d = 0; d < D; ++d) {
            dv_out[d] += p * dout[static_cast<std::size_t>(qr * D + d)];
            dk_out[d] += scale * ds * q[static_cast<std::size_t>(qr * D + d)];
          }
        }
    });
  }
  const CpuKernel* cpu_kernel() const override { return &flash_attention_backward_cpu_kernel(); }
  const GpuSource* cuda_source() const override {
    static constexpr GpuSource source{.file = "kernels/flash_attention_backward/flash_attention_backward.cu",
                                      .entry = "flash_attention_backward_kernel",
                                      .portable = true};
    return &source;
  }
};

}  // namespace

const KernelFamily& flash_attention_backward_family() {
  static const FlashAttentionBackwardFamily family;
  return family;
}

}  // namespace ktune
