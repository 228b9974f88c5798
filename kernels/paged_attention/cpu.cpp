// Paged decode attention on the CPU. A task takes one sequence's kv head and one of `splits`
// equal ranges of its tokens, and serves every query head of the group at once: each cached key
// and value row, found through the block table, is converted to float once for all of them.
// Tokens go through in blocks of block_kv (scores, an online-softmax update, the values added
// into float accumulators rescaled by the new maximum). With several splits each task leaves
// its maximum, sum and accumulators in a scratch of the run, and a second pass merges the splits
// of each head (what the GPU kernel does in its last block).
//
// Tunables (search_spaces/paged_attention.cpu.json): threads, splits, block_kv.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/common/cpu_numeric.hpp"
#include "kernels/common/cpu_shared_run.hpp"
#include "kernels/cpu_kernel.hpp"
#include "kernels/paged_attention/paged_attention.hpp"
#include "kernels/thread_pool.hpp"
#include "ktune/source_hash/paged_attention_cpu.hpp"

namespace ktune {
namespace {

using paged_attention::Shape;

struct Tiling {
  int threads;
  std::int64_t splits, block_kv;
};

// One split's partial result of one query head: the running maximum (log2 units), the sum of
// exponentials and the unnormalised output.
struct Partial {
  float max, sum;
};

template <typename T>
class PagedAttentionRun {
 public:
  PagedAttentionRun(Shape shape, Tiling tiling, const CpuLaunchContext& context)
      : s_(shape), t_(tiling), pool_(context.pool),
        q_(static_cast<const T*>(context.tensor("q").data)),
        k_(static_cast<const T*>(context.tensor("k_cache").data)),
        v_(static_cast<const T*>(context.tensor("v_cache").data)),
        table_(static_cast<const std::int32_t*>(context.tensor("block_table").data)),
        lens_(static_cast<const std::int32_t*>(context.tensor("seq_lens").data)),
        o_(static_cast<T*>(context.tensor("o").data)),
        lse_(static_cast<float*>(context.tensor("lse").data)),
        scale_(*static_cast<const float*>(context.tensor("scale").data)),
        partials_(static_cast<std::size_t>(s_.batch * s_.heads * t_.splits)),
        accumulators_(static_cast<std::size_t>(s_.batch * s_.heads * t_.splits * s_.head_dim)) {}

  void operator()() {
    const std::int64_t heads_of_kv = s_.batch * s_.kv_heads;
    pool_.parallel_for(heads_of_kv * t_.splits, t_.threads, [&](std::int64_t task) {
      thread_local std::vector<float> scratch;
      split(task / t_.splits, task % t_.splits, scratch);
    });
    pool_.parallel_for(s_.batch * s_.heads, t_.threads, [&](std::int64_t bh) { merge(bh); });
  }

 private:
  // Tokens [first, last) of kv head `bkv` (= batch * kv_heads + kv head) for the split.
  void split(std::int64_t bkv, std::int64_t which, std::vector<float>& scratch) {
    const std::int64_t D = s_.head_dim, G = s_.group(), b = bkv / s_.kv_heads, kvh = bkv % s_.kv_heads;
    // As the GPU kernel: a length past the table's pages is clamped to them.
    const std::int64_t len = std::min<std::int64_t>(lens_[b], s_.max_pages() * s_.page_size);
    const std::int64_t chunk = (len + t_.splits - 1) / t_.splits;
    const std::int64_t first = std::min(len, which * chunk), last = std::min(len, first + chunk);
    scratch.resize(static_cast<std::size_t>(G * D + G * t_.block_kv + 2 * t_.block_kv * D));
    float* q = scratch.data();          // [G][D], scaled so exp2 gives the softmax
    float* scores = q + G * D;          // [G][block_kv]
    float* k_block = scores + G * t_.block_kv;  // [block_kv][D]
    float* v_block = k_block + t_.block_kv * D;
    const float scale_log2 = static_cast<float>(1.4426950408889634 * scale_);
    const std::int64_t h0 = kvh * G;  // the group's first query head
    for (std::int64_t g = 0; g < G; ++g) {
      for (std::int64_t d = 0; d < D; ++d) q[g * D + d] = cpu::to_float(q_[(b * s_.heads + h0 + g) * D + d]) * scale_log2;
      Partial& p = partial(b, h0 + g, which);
      p = {-std::numeric_limits<float>::infinity(), 0.0f};
      std::fill(accumulator(b, h0 + g, which), accumulator(b, h0 + g, which) + D, 0.0f);
    }
    for (std::int64_t t0 = first; t0 < last; t0 += t_.block_kv) {
      const std::int64_t rows = std::min(t_.block_kv, last - t0);
      for (std::int64_t j = 0; j < rows; ++j) {
        const std::int64_t t = t0 + j, page = table_[b * s_.max_pages() + t / s_.page_size];
        const std::int64_t offset = ((page * s_.page_size + t % s_.page_size) * s_.kv_heads + kvh) * D;
        for (std::int64_t d = 0; d < D; ++d) {
          k_block[j * D + d] = cpu::to_float(k_[offset + d]);
          v_block[j * D + d] = cpu::to_float(v_[offset + d]);
        }
      }
      for (std::int64_t g = 0; g < G; ++g) {
        float* score = scores + g * t_.block_kv;
        float block_max = -std::numeric_limits<float>::infinity();
        for (std::int64_t j = 0; j < rows; ++j) {
          float dot = 0;
          for (std::int64_t d = 0; d < D; ++d) dot += q[g * D + d] * k_block[j * D + d];
          score[j] = dot;
          block_max = std::max(block_max, dot);
        }
        Partial& p = partial(b, h0 + g, which);
        const float new_max = std::max(p.max, block_max);
        const float rescale = std::exp2(p.max - new_max);  // 0 on the first block (max = -inf)
        p.max = new_max;
        float block_sum = 0;
        for (std::int64_t j = 0; j < rows; ++j) block_sum += (score[j] = std::exp2(score[j] - new_max));
        p.sum = p.sum * rescale + block_sum;
        float* acc = accumulator(b, h0 + g, which);
        for (std::int64_t d = 0; d < D; ++d) acc[d] *= rescale;
        for (std::int64_t j = 0; j < rows; ++j)
          for (std::int64_t d = 0; d < D; ++d) acc[d] += score[j] * v_block[j * D + d];
      }
    }
  }

  // The splits of query head bh (= batch * heads + head) rescaled to their common maximum.
  void merge(std::int64_t bh) {
    const std::int64_t D = s_.head_dim, b = bh / s_.heads, h = bh % s_.heads;
    float max = -std::numeric_limits<float>::infinity();
    for (std::int64_t i = 0; i < t_.splits; ++i) max = std::max(max, partial(b, h, i).max);
    float sum = 0;
    thread_local std::vector<float> out;  // no allocation per head in the timed runs
    out.assign(static_cast<std::size_t>(D), 0.0f);
    for (std::int64_t i = 0; i < t_.splits; ++i) {
      const Partial& p = partial(b, h, i);
      if (p.sum == 0) continue;  // a split past the sequence's end
      const float weight = std::exp2(p.max - max);
      sum += p.sum * weight;
      const float* acc = accumulator(b, h, i);
      for (std::int64_t d = 0; d < D; ++d) out[static_cast<std::size_t>(d)] += acc[d] * weight;
    }
    // A sequence of no tokens: o = 0, lse = -inf.
    for (std::int64_t d = 0; d < D; ++d)
      o_[bh * D + d] = cpu::from_float<T>(sum > 0 ? out[static_cast<std::size_t>(d)] / sum : 0.0f);
    lse_[bh] = sum > 0 ? (max + std::log2(sum)) * 0.69314718055994531f : -std::numeric_limits<float>::infinity();
  }

  Partial& partial(std::int64_t b, std::int64_t h, std::int64_t split) {
    return partials_[static_cast<std::size_t>((b * s_.heads + h) * t_.splits + split)];
  }
  float* accumulator(std::int64_t b, std::int64_t h, std::int64_t split) {
    return accumulators_.data() + ((b * s_.heads + h) * t_.splits + split) * s_.head_dim;
  }

  Shape s_;
  Tiling t_;
  ThreadPool& pool_;
  const T* q_;
  const T* k_;
  const T* v_;
  const std::int32_t* table_;
  const std::int32_t* lens_;
  T* o_;
  float* lse_;
  const float scale_;
  std::vector<Partial> partials_;
  std::vector<float> accumulators_;
};

class PagedAttentionCpu final : public CpuKernel {
 public:
  std::string source_hash() const override { return source_hash::paged_attention_cpu; }

  std::function<void()> prepare(const CpuLaunchContext& context) const override {
    const Config& config = context.config;
    const Tiling tiling{static_cast<int>(config.get_int("threads")), config.get_int("splits"),
                        config.get_int("block_kv")};
    if (tiling.threads < 1 || tiling.splits < 1 || tiling.block_kv < 1)
      throw UnsupportedConfig("threads, splits and block_kv must be at least 1");
    const Shape shape = Shape::of(context.problem);
    return cpu::shared_run<PagedAttentionRun>(context.problem.precision, "the CPU paged attention", shape, tiling,
                                              context);
  }
};

}  // namespace

const CpuKernel& paged_attention_cpu_kernel() {
  static const PagedAttentionCpu kernel;
  return kernel;
}

}  // namespace ktune
