#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "kernels/moe_routing/moe_routing.hpp"
#include "tuner/core/errors.hpp"

namespace ktune {
namespace moe_routing {

Shape Shape::of(const Problem& problem) {
  Shape s{problem.dim("tokens"), problem.dim("experts"),          problem.dim("top_k"),
          problem.dim("hidden"), problem.dim("capacity_percent"), problem.dim("renormalize") != 0};
  if (s.top_k > s.experts)
    throw InputError("moe_routing: top_k=" + std::to_string(s.top_k) + " must not exceed experts=" +
                     std::to_string(s.experts) + " (a token chooses distinct experts)");
  if (problem.dim("renormalize") > 1)
    throw InputError("moe_routing: renormalize=" + std::to_string(problem.dim("renormalize")) + " must be 0 or 1");
  return s;
}

}  // namespace moe_routing

namespace {

using moe_routing::Shape;

class MoeRoutingFamily final : public KernelFamily {
 public:
  std::string name() const override { return "moe_routing"; }
  std::string summary() const override {
    return "Mixture-of-experts routing: gate softmax, top-k experts per token, a capacity per expert (drops "
           "counted), and the tokens permuted into expert-contiguous rows for a grouped GEMM";
  }
  std::vector<DimSpec> dims() const override {
    return {{"tokens", 1024, "tokens routed"},
            {"experts", 8, "experts of the layer", 1, true},
            {"top_k", 2, "experts each token is sent to", 1, true},
            {"hidden", 1024, "elements of a token's row"},
            {"capacity_percent", 125, "capacity factor in percent of an even share (tokens * top_k / experts); 0: no limit", 0},
            {"renormalize", 1, "1: the chosen experts' weights sum to 1 (softmax over them); 0: their full-softmax probabilities", 0, true}};
  }
  std::optional<Precision> gpu_default_precision() const override { return Precision::bf16; }
  std::map<std::string, std::int64_t> gpu_default_shape() const override {
    return {{"tokens", 16384}, {"hidden", 4096}};
  }
  std::vector<Precision> precisions() const override { return {Precision::fp32, Precision::fp16, Precision::bf16}; }
  std::vector<TensorSpec> tensors(const Problem& problem) const override {
    const Shape s = Shape::of(problem);
    const std::int64_t choices = s.tokens * s.top_k;
    // Logits in [-2, 2]: on the coarse fp16/bf16 grids many are equal, so the tie rule is tested.
    return {{"logits", s.tokens * s.experts, false, -2.0, 2.0},
            {"x", s.tokens * s.hidden, false},
            {"weights", choices, true, 0.0, 1.0, Precision::fp32},
            {"expert_ids", choices, true, 0.0, 1.0, Precision::int32},
            {"rows", choices, true, 0.0, 1.0, Precision::int32},
            {"counts", s.experts, true, 0.0, 1.0, Precision::int32},
            {"dropped", 1, true, 0.0, 1.0, Precision::int32},
            {"dispatched", choices * s.hidden, true}};
  }
  // The softmax, its top-k and the prefix over tokens: a few operations per logit.
  double flop_count(const Problem& problem) const override {
    const Shape s = Shape::of(problem);
    return 4.0 * static_cast<double>(s.tokens * s.experts);
  }
  // What must move: the logits and x read once, every row of `dispatched` written (zeros too),
  // the per-choice outputs and the counts.
  double byte_count(const Problem& problem) const override {
    const Shape s = Shape::of(problem);
    const double element = static_cast<double>(element_bytes(problem.precision));
    return static_cast<double>(s.tokens * s.experts + s.tokens * s.hidden + s.tokens * s.top_k * s.hidden) * element +
           static_cast<double>(3 * s.tokens * s.top_k + s.experts + 1) * 4.0;
  }
  // Indices and counts are exact, copies are exact, the weights are float32 softmax values in
  // [0, 1]: element-wise closeness, so a single wrong index or row fails.
  std::optional<Closeness> closeness() const override { return Closeness{1e-5, 1e-4}; }

  void reference(const Problem& problem, HostTensors& tensors) const override {
    const Shape s = Shape::of(problem);
    const auto named = named_tensors(problem, tensors);
    const auto& logits = named.at("logits");
    const auto& x = named.at("x");
    auto& weights = named.at("weights");
    auto& ids = named.at("expert_ids");
    auto& rows = named.at("rows");
    auto& counts = named.at("counts");
    auto& dispatched = named.at("dispatched");
    const std::int64_t E = s.experts, K = s.top_k;
    std::vector<std::int64_t> position(static_cast<std::size_t>(K * s.tokens));  // within the expert
    std::vector<std::int64_t> total(static_cast<std::size_t>(E), 0);
    std::vector<std::int64_t> order(static_cast<std::size_t>(E));
    for (std::int64_t t = 0; t < s.tokens; ++t) {
      const double* l = logits.data() + t * E;
      std::iota(order.begin(), order.end(), 0);
      // Largest logit first, the lower index among equal ones.
      std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) { return l[a] > l[b]; });
      const double max = l[order[0]];
      double all = 0, chosen = 0;
      for (std::int64_t e = 0; e < E; ++e) all += std::exp(l[e] - max);
      for (std::int64_t k = 0; k < K; ++k) chosen += std::exp(l[order[static_cast<std::size_t>(k)]] - max);
      for (std::int64_t k = 0; k < K; ++k) {
        const std::int64_t e = order[static_cast<std::size_t>(k)];
        const auto c = static_cast<std::size_t>(t * K + k);
        ids[c] = static_cast<double>(e);
        weights[c] = std::exp(l[e] - max) / (s.renormalize ? chosen : all);
        position[c] = total[static_cast<std::size_t>(e)]++;
      }
    }
    const std::int64_t capacity = s.capacity();
    std::vector<std::int64_t> offset(static_cast<std::size_t>(E), 0);
    std::int64_t kept = 0, dropped = 0;
    for (std::int64_t e = 0; e < E; ++e) {
      const std::int64_t keeps = std::min(total[static_cast<std::size_t>(e)], capacity);
      offset[static_cast<std::size_t>(e)] = kept;
      counts[static_cast<std::size_t>(e)] = static_cast<double>(keeps);
      kept += keeps;
      dropped += total[static_cast<std::size_t>(e)] - keeps;
    }
    named.at("dropped")[0] = static_cast<double>(dropped);
    std::fill(dispatched.begin(), dispatched.end(), 0.0);
    for (std::int64_t c = 0; c < s.tokens * K; ++c) {
      const auto e = static_cast<std::size_t>(ids[static_cast<std::size_t>(c)]);
      const std::int64_t p = position[static_cast<std::size_t>(c)];
      const std::int64_t row = p < capacity ? offset[e] + p : -1;
      rows[static_cast<std::size_t>(c)] = static_cast<double>(row);
      if (row >= 0)
        std::copy_n(x.begin() + (c / K) * s.hidden, s.hidden, dispatched.begin() + row * s.hidden);
    }
  }
  const CpuKernel* cpu_kernel() const override { return &moe_routing_cpu_kernel(); }
  const GpuSource* cuda_source() const override {
    static constexpr GpuSource source{.file = "kernels/moe_routing/moe_routing.cu",
                                      .entry = "moe_routing_kernel",
                                      .portable = true};
    return &source;
  }
};

}  // namespace

const KernelFamily& moe_routing_family() {
  static const MoeRoutingFamily family;
  return family;
}

}  // namespace ktune
