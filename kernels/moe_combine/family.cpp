#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

#include "kernels/moe_combine/moe_combine.hpp"

namespace ktune {
namespace {

using moe_combine::dropped_choice;

class MoeCombineFamily final : public KernelFamily {
 public:
  std::string name() const override { return "moe_combine"; }
  std::string summary() const override {
    return "Mixture-of-experts combine (moe_routing's inverse): each token's expert outputs, found through the "
           "routing's rows (-1 dropped), weighted and summed back into its row";
  }
  std::vector<DimSpec> dims() const override {
    return {{"tokens", 1024, "tokens combined"},
            {"top_k", 2, "experts each token was sent to", 1, true},
            {"hidden", 1024, "elements of a row"}};
  }
  std::optional<Precision> gpu_default_precision() const override { return Precision::bf16; }
  std::map<std::string, std::int64_t> gpu_default_shape() const override {
    return {{"tokens", 16384}, {"hidden", 4096}};
  }
  std::vector<Precision> precisions() const override { return {Precision::fp32, Precision::fp16, Precision::bf16}; }
  std::vector<TensorSpec> tensors(const Problem& problem) const override {
    const std::int64_t tokens = problem.dim("tokens"), k = problem.dim("top_k"), hidden = problem.dim("hidden");
    return {{"expert_out", tokens * k * hidden, false},
            {"weights", tokens * k, false, 0.0, 1.0, Precision::fp32},
            {"rows", tokens * k, false, 0.0, 0.0, Precision::int32},  // written by make_inputs
            {"y", tokens * hidden, true}};
  }
  // The kept choices numbered in a random order (the routing's expert-contiguous rows of a token
  // are far apart), the dropped ones -1.
  HostTensors make_inputs(const Problem& problem, std::uint64_t seed) const override {
    HostTensors host = KernelFamily::make_inputs(problem, seed);
    const std::int64_t choices = problem.dim("tokens") * problem.dim("top_k");
    std::vector<std::int64_t> order(static_cast<std::size_t>(choices));
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), std::mt19937_64(seed ^ 0xc0b1e5));
    auto& rows = named_tensors(problem, host).at("rows");
    std::int64_t next = 0;
    for (const std::int64_t c : order)
      rows[static_cast<std::size_t>(c)] = dropped_choice(c) ? -1.0 : static_cast<double>(next++);
    return host;
  }
  double flop_count(const Problem& problem) const override {
    return 2.0 * static_cast<double>(kept(problem) * problem.dim("hidden"));
  }
  // The kept choices' rows of expert_out read, y written, the weights and rows read.
  double byte_count(const Problem& problem) const override {
    const double element = static_cast<double>(element_bytes(problem.precision));
    const std::int64_t tokens = problem.dim("tokens"), hidden = problem.dim("hidden");
    return static_cast<double>((kept(problem) + tokens) * hidden) * element +
           static_cast<double>(tokens * problem.dim("top_k")) * 8.0;
  }

  void reference(const Problem& problem, HostTensors& tensors) const override {
    const auto named = named_tensors(problem, tensors);
    const auto& expert_out = named.at("expert_out");
    const auto& weights = named.at("weights");
    const auto& rows = named.at("rows");
    auto& y = named.at("y");
    const std::int64_t tokens = problem.dim("tokens"), K = problem.dim("top_k"), H = problem.dim("hidden");
    std::fill(y.begin(), y.end(), 0.0);
    for (std::int64_t t = 0; t < tokens; ++t)
      for (std::int64_t k = 0; k < K; ++k) {
        const auto row = static_cast<std::int64_t>(rows[static_cast<std::size_t>(t * K + k)]);
        if (row < 0) continue;
        const double w = weights[static_cast<std::size_t>(t * K + k)];
        for (std::int64_t h = 0; h < H; ++h)
          y[static_cast<std::size_t>(t * H + h)] += w * expert_out[static_cast<std::size_t>(row * H + h)];
      }
  }
  const CpuKernel* cpu_kernel() const override { return &moe_combine_cpu_kernel(); }
  const GpuSource* cuda_source() const override {
    static constexpr GpuSource source{.file = "kernels/moe_combine/moe_combine.cu",
                                      .entry = "moe_combine_kernel",
                                      .portable = true};
    return &source;
  }

 private:
  static std::int64_t kept(const Problem& problem) {
    const std::int64_t choices = problem.dim("tokens") * problem.dim("top_k");
    std::int64_t dropped = 0;
    for (std::int64_t c = 0; c < choices; ++c) dropped += dropped_choice(c);
    return choices - dropped;
  }
};

}  // namespace

const KernelFamily& moe_combine_family() {
  static const MoeCombineFamily family;
  return family;
}

}  // namespace ktune
