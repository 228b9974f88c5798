// attention_block: a transformer's attention sub-block in one call, composed of tuned ktune
// kernels (KernelFamily::composition): the fused QKV projection (gemm, bias epilogue), the split
// into heads with RoPE (split_heads), flash attention (GQA, causal), the heads back into token
// rows (merge_heads) and the output projection adding its bias and the residual (gemm, epilogue
// 5). Each stage runs the config the library chooses for its own problem.
//
// Tensors, row-major (inputs first):
//   x     [batch * seq, hidden]                          the block's input (also the residual)
//   w_qkv [(heads + 2 kv_heads) * head_dim, hidden]     nn.Linear weight: q rows, then k, then v
//   b_qkv [(heads + 2 kv_heads) * head_dim]
//   cos   [seq, head_dim / 2]  RoPE tables of the positions 0..seq-1 (read when rope = 1; one
//   sin   [seq, head_dim / 2]  element each otherwise), NeoX convention (split_heads.hpp)
//   w_o   [hidden, heads * head_dim]                     nn.Linear weight of the output projection
//   b_o   [hidden]
//   y     [batch * seq, hidden]  (output) x + attention(x) · w_oᵀ + b_o; without the x when
//                                 residual = 0 (nn.MultiheadAttention's output)
// The attention scale is 1/sqrt(head_dim). Between the stages, q, k, v and the attention's output
// are stored in the problem's precision, as PyTorch's route stores them.
#include <cmath>
#include <vector>

#include "kernels/common/reference_rows.hpp"
#include "kernels/family.hpp"
#include "kernels/flash_attention/flash_attention.hpp"
#include "kernels/split_heads/split_heads.hpp"
#include "tuner/core/errors.hpp"

namespace ktune {
namespace {

struct BlockShape {
  std::int64_t batch, seq, hidden, heads, kv_heads, head_dim;
  bool causal, rope, residual;

  static BlockShape of(const Problem& problem) {
    BlockShape s{problem.dim("batch"),    problem.dim("seq"),      problem.dim("hidden"),
                 problem.dim("heads"),    problem.dim("kv_heads"), problem.dim("head_dim"),
                 problem.dim("causal") != 0, problem.dim("rope") != 0, problem.dim("residual") != 0};
    if (s.kv_heads == 0) s.kv_heads = s.heads;
    if (s.heads % s.kv_heads != 0)
      throw InputError("attention_block: kv_heads (" + std::to_string(s.kv_heads) + ") must divide heads (" +
                       std::to_string(s.heads) + ")");
    if (s.head_dim % 2 != 0)
      throw InputError("attention_block: head_dim must be even, got " + std::to_string(s.head_dim));
    for (const char* option : {"causal", "rope", "residual"})
      if (problem.dim(option) > 1)
        throw InputError(std::string("attention_block: ") + option + " must be 0 or 1, not " +
                         std::to_string(problem.dim(option)));
    return s;
  }
  std::int64_t tokens() const { return batch * seq; }
  std::int64_t qkv_width() const { return (heads + 2 * kv_heads) * head_dim; }
  std::int64_t attention_width() const { return heads * head_dim; }
  std::int64_t table() const { return rope ? seq * (head_dim / 2) : 1; }
  flash_attention::Shape attention() const { return {batch, heads, kv_heads, seq, seq, head_dim, causal}; }
};

class AttentionBlockFamily final : public KernelFamily {
 public:
  std::string name() const override { return "attention_block"; }
  std::string summary() const override {
    return "attention sub-block y = x + attention(RoPE(x W_qkv^T + b_qkv)) W_o^T + b_o in one call (GQA, causal, "
           "RoPE and residual options): ktune's tuned gemm, split_heads, flash_attention, merge_heads and gemm in "
           "sequence";
  }
  std::vector<DimSpec> dims() const override {
    return {{"batch", 1, "sequences"},
            {"seq", 2048, "tokens per sequence (a token's RoPE position is its index in it)"},
            {"hidden", 4096, "model width: columns of x and y"},
            {"heads", 32, "query heads"},
            {"kv_heads", 0, "key/value heads, dividing heads (grouped-query attention); 0: as many as heads", 0},
            {"head_dim", 128, "elements per head (even; a size flash attention compiles)", 1, true},
            {"causal", 0, "1: each token sees only the tokens before it and itself", 0, true},
            {"rope", 0, "1: rotate q and k by RoPE (cos and sin tables)", 0},
            {"residual", 1, "1: add x to the output (the block's residual); 0: the attention's projection alone", 0}};
  }
  std::optional<Precision> gpu_default_precision() const override { return Precision::bf16; }
  std::vector<Precision> precisions() const override { return {Precision::fp32, Precision::fp16, Precision::bf16}; }
  std::vector<TensorSpec> tensors(const Problem& problem) const override {
    const BlockShape s = BlockShape::of(problem);
    // Weights scaled like nn.Linear's initialisation, so the scores spread over a few units.
    const double in_scale = 1.0 / std::sqrt(static_cast<double>(s.hidden));
    const double out_scale = 1.0 / std::sqrt(static_cast<double>(s.attention_width()));
    return {{"x", s.tokens() * s.hidden, false},
            {"w_qkv", s.qkv_width() * s.hidden, false, -2 * in_scale, 2 * in_scale},
            {"b_qkv", s.qkv_width(), false, -0.5, 0.5},
            {"cos", s.table(), false, -1.0, 1.0},
            {"sin", s.table(), false, -1.0, 1.0},
            {"w_o", s.hidden * s.attention_width(), false, -out_scale, out_scale},
            {"b_o", s.hidden, false, -0.5, 0.5},
            {"y", s.tokens() * s.hidden, true}};
  }
  // The two projections' 2·m·n·k each and attention's (halved when causal); the rotation and the
  // layout steps are not counted.
  double flop_count(const Problem& problem) const override {
    const BlockShape s = BlockShape::of(problem);
    const double tokens = static_cast<double>(s.tokens());
    const double attention = 4.0 * static_cast<double>(s.batch * s.heads) * static_cast<double>(s.seq) *
                             static_cast<double>(s.seq) * static_cast<double>(s.head_dim);
    return 2.0 * tokens * static_cast<double>(s.hidden) * static_cast<double>(s.qkv_width() + s.attention_width()) +
           (s.causal ? attention / 2 : attention);
  }
  bool memory_bound() const override { return false; }

  // In full, for the small shapes the composition is checked at (the stages are checked by their
  // own references at any size): every row of y sums over every head, so attention's sampled
  // rows at large shapes would leave y unchecked. Refused past that size.
  void reference(const Problem& problem, HostTensors& tensors) const override {
    const BlockShape s = BlockShape::of(problem);
    if (flop_count(problem) / 2 > reference::kFullReferenceFma)
      throw InputError("attention_block: its float64 reference computes the whole block, which " + problem.describe() +
                       " is too large for; its stages are each checked by their own references at any size");
    const auto named = named_tensors(problem, tensors);
    const auto& x = named.at("x");
    const auto& w_qkv = named.at("w_qkv");
    const auto& b_qkv = named.at("b_qkv");
    const auto& w_o = named.at("w_o");
    const auto& b_o = named.at("b_o");
    auto& y = named.at("y");
    const std::int64_t d = s.head_dim;
    // The QKV projection, then split_heads' split (and rotation) into flash attention's q, k, v.
    std::vector<double> qkv(static_cast<std::size_t>(s.tokens() * s.qkv_width()));
    for (std::int64_t r = 0; r < s.tokens(); ++r)
      for (std::int64_t j = 0; j < s.qkv_width(); ++j) {
        double sum = b_qkv[j];
        for (std::int64_t p = 0; p < s.hidden; ++p) sum += x[r * s.hidden + p] * w_qkv[j * s.hidden + p];
        qkv[static_cast<std::size_t>(r * s.qkv_width() + j)] = sum;
      }
    std::vector<std::vector<double>> attention(6);  // q, k, v, o, lse, scale
    attention[0].resize(static_cast<std::size_t>(s.tokens() * s.heads * d));
    attention[1].resize(static_cast<std::size_t>(s.tokens() * s.kv_heads * d));
    attention[2].resize(attention[1].size());
    attention[3].resize(attention[0].size());
    attention[4].resize(static_cast<std::size_t>(s.tokens() * s.heads));
    attention[5] = {1.0 / std::sqrt(static_cast<double>(d))};
    split_heads::reference_split({s.batch, s.seq, s.heads, s.kv_heads, d, s.rope}, qkv.data(), named.at("cos").data(),
                                 named.at("sin").data(), attention[0].data(), attention[1].data(), attention[2].data());
    const std::vector<std::string> names{"q", "k", "v", "o", "lse", "scale"};
    flash_attention::reference_forward(s.attention(),
                                       NamedTensors<std::vector<double>>("flash_attention", names, attention));
    const auto& o = attention[3];
    for (std::int64_t b = 0; b < s.batch; ++b)
      for (std::int64_t t = 0; t < s.seq; ++t)
        for (std::int64_t j = 0; j < s.hidden; ++j) {
          const std::int64_t r = b * s.seq + t;
          double sum = b_o[j] + (s.residual ? x[r * s.hidden + j] : 0.0);
          for (std::int64_t h = 0; h < s.heads; ++h)
            for (std::int64_t e = 0; e < d; ++e)
              sum += o[((b * s.heads + h) * s.seq + t) * d + e] * w_o[j * s.attention_width() + h * d + e];
          y[r * s.hidden + j] = sum;
        }
  }

  bool composed() const override { return true; }
  std::optional<Composition> composition(const Problem& problem) const override {
    const BlockShape s = BlockShape::of(problem);
    Composition c;
    // q, k and v in the layout flash attention reads; the attention's output o reuses qkv's memory
    // (dead once split) and its token rows reuse q's (dead once attended).
    c.intermediates = {{"qkv", s.tokens() * s.qkv_width()},
                       {"q", s.tokens() * s.attention_width()},
                       {"k", s.tokens() * s.kv_heads * s.head_dim},
                       {"v", s.tokens() * s.kv_heads * s.head_dim},
                       {"lse", s.tokens() * s.heads, Precision::fp32},
                       {"scale", 1, Precision::fp32, {1.0 / std::sqrt(static_cast<double>(s.head_dim))}},
                       {"alpha_beta", 2, std::nullopt, {1.0, 1.0}},
                       // What a GEMM epilogue that reads no c gets for it: its own one element, as a
                       // Vulkan call takes no tensor twice.
                       {"unread_c", 1}};
    c.stages = {
        {"gemm",
         {{"m", s.tokens()}, {"n", s.qkv_width()}, {"k", s.hidden}, {"b_layout", 0}, {"epilogue", 2}},
         {{"a", "x"}, {"b", "w_qkv"}, {"c", "unread_c"}, {"bias", "b_qkv"}, {"scalars", "alpha_beta"}, {"d", "qkv"}}},
        {"split_heads",
         {{"batch", s.batch}, {"seq", s.seq}, {"heads", s.heads}, {"kv_heads", s.kv_heads}, {"head_dim", s.head_dim},
          {"rope", s.rope ? 1 : 0}},
         {{"qkv", "qkv"}, {"cos", "cos"}, {"sin", "sin"}, {"q", "q"}, {"k", "k"}, {"v", "v"}}},
        {"flash_attention",
         {{"batch", s.batch}, {"heads", s.heads}, {"kv_heads", s.kv_heads}, {"seq_q", s.seq}, {"seq_kv", s.seq},
          {"head_dim", s.head_dim}, {"causal", s.causal ? 1 : 0}},
         {{"q", "q"}, {"k", "k"}, {"v", "v"}, {"o", "qkv"}, {"lse", "lse"}, {"scale", "scale"}}},
        {"merge_heads",
         {{"batch", s.batch}, {"heads", s.heads}, {"seq", s.seq}, {"head_dim", s.head_dim}},
         {{"x", "qkv"}, {"y", "q"}}},
        // Epilogue 5 adds the residual c = x; epilogue 2 the bias alone.
        {"gemm",
         {{"m", s.tokens()}, {"n", s.hidden}, {"k", s.attention_width()}, {"b_layout", 0}, {"epilogue", s.residual ? 5 : 2}},
         {{"a", "q"}, {"b", "w_o"}, {"c", s.residual ? "x" : "unread_c"}, {"bias", "b_o"}, {"scalars", "alpha_beta"}, {"d", "y"}}}};
    return c;
  }
};

}  // namespace

const KernelFamily& attention_block_family() {
  static const AttentionBlockFamily family;
  return family;
}

}  // namespace ktune
