// MoE routing on the CPU, in three passes over chunks of chunk_tokens tokens:
//   1. per chunk (in parallel): each token's softmax and top-k, its weights and expert ids, and
//      its position among the chunk's tokens that chose the same expert; the chunk's counts;
//   2. the chunks' counts summed in order per expert (chunks x experts additions, one thread);
//   3. per chunk (in parallel): each choice's row (its expert's offset plus its position, or -1
//      past the capacity), the copy of x into it, and the zeroing of the unused rows the chunk's
//      choices would have filled.
//
// Tunables (search_spaces/moe_routing.cpu.json): threads, chunk_tokens.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/common/cpu_numeric.hpp"
#include "kernels/common/cpu_shared_run.hpp"
#include "kernels/cpu_kernel.hpp"
#include "kernels/moe_routing/moe_routing.hpp"
#include "kernels/thread_pool.hpp"
#include "ktune/source_hash/moe_routing_cpu.hpp"

namespace ktune {
namespace {

using moe_routing::Shape;

struct Tiling {
  int threads;
  std::int64_t chunk_tokens;
};

template <typename T>
class MoeRoutingRun {
 public:
  MoeRoutingRun(Shape shape, Tiling tiling, const CpuLaunchContext& context)
      : s_(shape), t_(tiling), pool_(context.pool),
        logits_(static_cast<const T*>(context.tensor("logits").data)),
        x_(static_cast<const T*>(context.tensor("x").data)),
        weights_(static_cast<float*>(context.tensor("weights").data)),
        ids_(static_cast<std::int32_t*>(context.tensor("expert_ids").data)),
        rows_(static_cast<std::int32_t*>(context.tensor("rows").data)),
        counts_(static_cast<std::int32_t*>(context.tensor("counts").data)),
        dropped_(static_cast<std::int32_t*>(context.tensor("dropped").data)),
        dispatched_(static_cast<T*>(context.tensor("dispatched").data)),
        chunks_((s_.tokens + t_.chunk_tokens - 1) / t_.chunk_tokens),
        before_(static_cast<std::size_t>(chunks_ * s_.experts)),
        offset_(static_cast<std::size_t>(s_.experts)) {}

  void operator()() {
    pool_.parallel_for(chunks_, t_.threads, [&](std::int64_t chunk) { route(chunk); });
    // before_[chunk][e] holds the chunk's count of e; it becomes the count of the chunks before.
    const std::int64_t E = s_.experts, capacity = s_.capacity();
    std::int64_t kept = 0, dropped = 0;
    for (std::int64_t e = 0; e < E; ++e) {
      std::int64_t total = 0;
      for (std::int64_t c = 0; c < chunks_; ++c) {
        const std::int64_t count = before_[static_cast<std::size_t>(c * E + e)];
        before_[static_cast<std::size_t>(c * E + e)] = total;
        total += count;
      }
      const std::int64_t keeps = std::min(total, capacity);
      offset_[static_cast<std::size_t>(e)] = kept;
      counts_[e] = static_cast<std::int32_t>(keeps);
      kept += keeps;
      dropped += total - keeps;
    }
    *dropped_ = static_cast<std::int32_t>(dropped);
    kept_ = kept;
    pool_.parallel_for(chunks_, t_.threads, [&](std::int64_t chunk) { dispatch(chunk); });
  }

 private:
  // Pass 1. rows_ holds each choice's position within its chunk until pass 3.
  void route(std::int64_t chunk) {
    const std::int64_t E = s_.experts, K = s_.top_k;
    const std::int64_t first = chunk * t_.chunk_tokens, last = std::min(s_.tokens, first + t_.chunk_tokens);
    std::int64_t* count = before_.data() + chunk * E;
    std::fill(count, count + E, 0);
    thread_local std::vector<float> logit;
    thread_local std::vector<std::int32_t> best;
    logit.resize(static_cast<std::size_t>(E));
    best.resize(static_cast<std::size_t>(K));
    for (std::int64_t t = first; t < last; ++t) {
      for (std::int64_t e = 0; e < E; ++e) logit[static_cast<std::size_t>(e)] = cpu::to_float(logits_[t * E + e]);
      // Top-k by insertion into a list sorted by logit: a later expert passes only strictly
      // smaller logits, so among equal logits the lower index stays ahead.
      std::int64_t held = 0;
      for (std::int64_t e = 0; e < E; ++e) {
        const float v = logit[static_cast<std::size_t>(e)];
        if (held == K && v <= logit[static_cast<std::size_t>(best[static_cast<std::size_t>(K - 1)])]) continue;
        std::int64_t at = std::min(held, K - 1);
        while (at > 0 && logit[static_cast<std::size_t>(best[static_cast<std::size_t>(at - 1)])] < v) {
          best[static_cast<std::size_t>(at)] = best[static_cast<std::size_t>(at - 1)];
          --at;
        }
        best[static_cast<std::size_t>(at)] = static_cast<std::int32_t>(e);
        held = std::min(held + 1, K);
      }
      const float max = logit[static_cast<std::size_t>(best[0])];
      float sum = 0;
      if (s_.renormalize) {
        for (std::int64_t k = 0; k < K; ++k) sum += std::exp(logit[static_cast<std::size_t>(best[static_cast<std::size_t>(k)])] - max);
      } else {
        for (std::int64_t e = 0; e < E; ++e) sum += std::exp(logit[static_cast<std::size_t>(e)] - max);
      }
      for (std::int64_t k = 0; k < K; ++k) {
        const std::int32_t e = best[static_cast<std::size_t>(k)];
        weights_[t * K + k] = std::exp(logit[static_cast<std::size_t>(e)] - max) / sum;
        ids_[t * K + k] = e;
        rows_[t * K + k] = static_cast<std::int32_t>(count[e]++);
      }
    }
  }

  // Pass 3.
  void dispatch(std::int64_t chunk) {
    const std::int64_t E = s_.experts, K = s_.top_k, H = s_.hidden, capacity = s_.capacity();
    const std::int64_t first = chunk * t_.chunk_tokens, last = std::min(s_.tokens, first + t_.chunk_tokens);
    const std::int64_t* before = before_.data() + chunk * E;
    for (std::int64_t c = first * K; c < last * K; ++c) {
      const std::int32_t e = ids_[c];
      const std::int64_t position = before[e] + rows_[c];
      const std::int64_t row = position < capacity ? offset_[static_cast<std::size_t>(e)] + position : -1;
      rows_[c] = static_cast<std::int32_t>(row);
      if (row >= 0) std::memcpy(dispatched_ + row * H, x_ + (c / K) * H, static_cast<std::size_t>(H) * sizeof(T));
    }
    // Rows past the kept total that this chunk's share of rows covers are zero.
    const std::int64_t zero_from = std::max(first * K, kept_), zero_to = last * K;
    if (zero_from < zero_to)
      std::memset(static_cast<void*>(dispatched_ + zero_from * H), 0, static_cast<std::size_t>((zero_to - zero_from) * H) * sizeof(T));
  }

  Shape s_;
  Tiling t_;
  ThreadPool& pool_;
  const T* logits_;
  const T* x_;
  float* weights_;
  std::int32_t* ids_;
  std::int32_t* rows_;
  std::int32_t* counts_;
  std::int32_t* dropped_;
  T* dispatched_;
  const std::int64_t chunks_;
  std::vector<std::int64_t> before_;  // [chunk][expert]
  std::vector<std::int64_t> offset_;  // each expert's first row
  std::int64_t kept_ = 0;
};

class MoeRoutingCpu final : public CpuKernel {
 public:
  std::string source_hash() const override { return source_hash::moe_routing_cpu; }

  std::function<void()> prepare(const CpuLaunchContext& context) const override {
    const Tiling tiling{static_cast<int>(context.config.get_int("threads")), context.config.get_int("chunk_tokens")};
    if (tiling.threads < 1 || tiling.chunk_tokens < 1)
      throw UnsupportedConfig("threads and chunk_tokens must be at least 1");
    return cpu::shared_run<MoeRoutingRun>(context.problem.precision, "the CPU MoE routing",
                                          Shape::of(context.problem), tiling, context);
  }
};

}  // namespace

const CpuKernel& moe_routing_cpu_kernel() {
  static const MoeRoutingCpu kernel;
  return kernel;
}

}  // namespace ktune
