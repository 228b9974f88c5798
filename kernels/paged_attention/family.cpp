#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "kernels/paged_attention/paged_attention.hpp"
#include "tuner/core/errors.hpp"

namespace ktune {
namespace paged_attention {

Shape Shape::of(const Problem& problem) {
  Shape s{problem.dim("batch"),     problem.dim("heads"),     problem.dim("kv_heads"),
          problem.dim("head_dim"),  problem.dim("page_size"), problem.dim("seq_kv")};
  if (s.kv_heads == 0) s.kv_heads = s.heads;
  if (s.kv_heads > s.heads || s.heads % s.kv_heads != 0)
    throw InputError("paged_attention: kv_heads=" + std::to_string(s.kv_heads) + " must divide heads=" +
                     std::to_string(s.heads) + " (each kv head serves heads/kv_heads query heads)");
  return s;
}

}  // namespace paged_attention

namespace {

using paged_attention::sequence_length;
using paged_attention::Shape;

class PagedAttentionFamily final : public KernelFamily {
 public:
  std::string name() const override { return "paged_attention"; }
  std::string summary() const override {
    return "Decode attention over a paged KV cache: one query token per sequence, keys and values in pages of "
           "a shared pool found through a block table, ragged sequence lengths, grouped-query heads, with "
           "log-sum-exp";
  }
  std::vector<DimSpec> dims() const override {
    return {{"batch", 4, "sequences (one query token each)"},
            {"heads", 32, "query heads"},
            {"kv_heads", 8, "key/value heads, dividing heads (grouped-query attention); 0: as many as heads", 0},
            {"head_dim", 128, "elements per head", 1, true},
            {"page_size", 16, "tokens per page of the cache", 1, true},
            {"seq_kv", 1024, "tokens cached by the longest sequence (the others hold 3/4 to all of it)"}};
  }
  std::optional<Precision> gpu_default_precision() const override { return Precision::bf16; }
  std::map<std::string, std::int64_t> gpu_default_shape() const override {
    return {{"batch", 16}, {"seq_kv", 8192}};
  }
  std::vector<Precision> precisions() const override { return {Precision::fp32, Precision::fp16, Precision::bf16}; }
  std::vector<TensorSpec> tensors(const Problem& problem) const override {
    const Shape s = Shape::of(problem);
    const std::int64_t cache = s.num_pages() * s.page_size * s.kv_heads * s.head_dim;
    // q and k in [-2, 2]: scores spread over several units, so a kernel that gets the maximum,
    // the scale or a page wrong is visibly off. The integer tensors are written by make_inputs.
    return {{"q", s.batch * s.heads * s.head_dim, false, -2.0, 2.0},
            {"k_cache", cache, false, -2.0, 2.0},
            {"v_cache", cache, false},
            {"block_table", s.batch * s.max_pages(), false, 0.0, 0.0, Precision::int32},
            {"seq_lens", s.batch, false, 1.0, 1.0, Precision::int32},
            // Around the usual 1/sqrt(head_dim), never exactly it.
            {"scale", 1, false, 0.5 / std::sqrt(double(s.head_dim)), 1.5 / std::sqrt(double(s.head_dim)), Precision::fp32},
            {"o", s.batch * s.heads * s.head_dim, true},
            {"lse", s.batch * s.heads, true, -1.0, 1.0, Precision::fp32}};
  }
  // Random floats as usual; each sequence's length from sequence_length(); its pages a random
  // permutation of the pool (so neighbouring pages of a sequence are far apart in memory), the
  // table's entries past its last page -1.
  HostTensors make_inputs(const Problem& problem, std::uint64_t seed) const override {
    HostTensors host = KernelFamily::make_inputs(problem, seed);
    const Shape s = Shape::of(problem);
    const auto named = named_tensors(problem, host);
    auto& table = named.at("block_table");
    auto& lens = named.at("seq_lens");
    std::vector<std::int64_t> pool(static_cast<std::size_t>(s.num_pages()));
    std::iota(pool.begin(), pool.end(), 0);
    std::shuffle(pool.begin(), pool.end(), std::mt19937_64(seed ^ 0x9a9eda7e));
    for (std::int64_t b = 0; b < s.batch; ++b) {
      const std::int64_t len = sequence_length(b, s.seq_kv), pages = (len + s.page_size - 1) / s.page_size;
      lens[static_cast<std::size_t>(b)] = static_cast<double>(len);
      for (std::int64_t p = 0; p < s.max_pages(); ++p)
        table[static_cast<std::size_t>(b * s.max_pages() + p)] =
            p < pages ? static_cast<double>(pool[static_cast<std::size_t>(b * s.max_pages() + p)]) : -1.0;
    }
    return host;
  }
  // 4·heads·head_dim per cached token of each sequence (the two products).
  double flop_count(const Problem& problem) const override {
    const Shape s = Shape::of(problem);
    return 4.0 * static_cast<double>(tokens(s)) * static_cast<double>(s.heads * s.head_dim);
  }
  // What a kernel must move: each sequence's cached keys and values (not the pool's unused
  // slots), its row of the block table and its length, q, o and lse.
  double byte_count(const Problem& problem) const override {
    const Shape s = Shape::of(problem);
    const double element = static_cast<double>(element_bytes(problem.precision));
    return 2.0 * static_cast<double>(tokens(s) * s.kv_heads * s.head_dim) * element +
           static_cast<double>(s.batch * (s.max_pages() + 1)) * 4.0 +
           2.0 * static_cast<double>(s.batch * s.heads * s.head_dim) * element + static_cast<double>(s.batch * s.heads) * 4.0;
  }

  void reference(const Problem& problem, HostTensors& tensors) const override {
    const Shape s = Shape::of(problem);
    const auto named = named_tensors(problem, tensors);
    const auto& q = named.at("q");
    const auto& k = named.at("k_cache");
    const auto& v = named.at("v_cache");
    const auto& table = named.at("block_table");
    const auto& lens = named.at("seq_lens");
    auto& o = named.at("o");
    auto& lse = named.at("lse");
    const double scale = named.at("scale")[0];
    const std::int64_t D = s.head_dim;
    std::vector<double> scores;
    for (std::int64_t b = 0; b < s.batch; ++b) {
      const auto len = static_cast<std::int64_t>(lens[static_cast<std::size_t>(b)]);
      scores.assign(static_cast<std::size_t>(len), 0.0);
      for (std::int64_t h = 0; h < s.heads; ++h) {
        const std::int64_t kvh = h / s.group();
        const double* q_row = q.data() + (b * s.heads + h) * D;
        // Row t of the cache for kv head kvh: its page from the block table, then its slot.
        auto cached = [&](const std::vector<double>& cache, std::int64_t t) {
          const auto page = static_cast<std::int64_t>(table[static_cast<std::size_t>(b * s.max_pages() + t / s.page_size)]);
          return cache.data() + ((page * s.page_size + t % s.page_size) * s.kv_heads + kvh) * D;
        };
        double max = -std::numeric_limits<double>::infinity();
        for (std::int64_t t = 0; t < len; ++t) {
          const double* k_row = cached(k, t);
          double dot = 0;
          for (std::int64_t d = 0; d < D; ++d) dot += q_row[d] * k_row[d];
          scores[static_cast<std::size_t>(t)] = dot * scale;
          max = std::max(max, dot * scale);
        }
        double* o_row = o.data() + (b * s.heads + h) * D;
        std::fill(o_row, o_row + D, 0.0);
        double sum = 0;
        for (std::int64_t t = 0; t < len; ++t) {
          const double p = std::exp(scores[static_cast<std::size_t>(t)] - max);
          sum += p;
          const double* v_row = cached(v, t);
          for (std::int64_t d = 0; d < D; ++d) o_row[d] += p * v_row[d];
        }
        for (std::int64_t d = 0; d < D; ++d) o_row[d] = sum > 0 ? o_row[d] / sum : 0.0;  // no tokens: o = 0
        lse[static_cast<std::size_t>(b * s.heads + h)] = max + std::log(sum);  // -inf for no tokens
      }
    }
  }
  const CpuKernel* cpu_kernel() const override { return &paged_attention_cpu_kernel(); }
  const GpuSource* cuda_source() const override {
    static constexpr GpuSource source{.file = "kernels/paged_attention/paged_attention.cu",
                                      .entry = "paged_attention_kernel",
                                      .portable = true};
    return &source;
  }

 private:
  static std::int64_t tokens(const Shape& s) {
    std::int64_t total = 0;
    for (std::int64_t b = 0; b < s.batch; ++b) total += sequence_length(b, s.seq_kv);
    return total;
  }
};

}  // namespace

const KernelFamily& paged_attention_family() {
  static const PagedAttentionFamily family;
  return family;
}

}  // namespace ktune
