#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/common/reference_rows.hpp"
#include "kernels/gemm/gemm.hpp"
#include "kernels/grouped_gemm/grouped_gemm.hpp"

namespace ktune {
namespace grouped_gemm {

std::vector<std::int64_t> group_sizes_of(std::int64_t m, std::int64_t experts) {
  std::vector<std::int64_t> shares(static_cast<std::size_t>(experts));
  std::int64_t total = 0;
  for (std::int64_t g = 0; g < experts; ++g) {
    shares[static_cast<std::size_t>(g)] = experts >= 3 && g == 1 ? 0 : 1 + (g * 7919) % 5;
    total += shares[static_cast<std::size_t>(g)];
  }
  std::vector<std::int64_t> sizes(static_cast<std::size_t>(experts));
  std::int64_t given = 0;
  for (std::int64_t g = 0; g + 1 < experts; ++g) {
    sizes[static_cast<std::size_t>(g)] = m * shares[static_cast<std::size_t>(g)] / total;
    given += sizes[static_cast<std::size_t>(g)];
  }
  sizes.back() = m - given;
  return sizes;
}

}  // namespace grouped_gemm

namespace {

class GroupedGemmFamily final : public KernelFamily {
 public:
  std::string name() const override { return "grouped_gemm"; }
  std::string summary() const override {
    return "Grouped GEMM of a mixture-of-experts layer, contiguous layout: each expert's rows of A [m,k] times its "
           "own weight B[g] [n,k] (nn.Linear), group sizes an int32 input, fp32 accumulation";
  }
  std::vector<DimSpec> dims() const override {
    return {{"m", 1024, "rows of A and D over all groups (tokens routed to experts)"},
            {"experts", 8, "groups, each with its own weight"},
            {"n", 1024, "output features"},
            {"k", 1024, "input features (reduction length)"}};
  }
  std::optional<Precision> gpu_default_precision() const override { return Precision::bf16; }
  std::map<std::string, std::int64_t> gpu_default_shape() const override {
    return {{"m", 16384}, {"experts", 8}, {"n", 4096}, {"k", 4096}};
  }
  std::vector<Precision> precisions() const override { return {Precision::fp32, Precision::fp16, Precision::bf16}; }
  std::vector<TensorSpec> tensors(const Problem& problem) const override {
    const auto m = problem.dim("m"), experts = problem.dim("experts"), n = problem.dim("n"), k = problem.dim("k");
    return {{"a", m * k, false},
            {"b", experts * n * k, false},
            {"group_sizes", experts, false, 0.0, 0.0, Precision::int32},  // written by make_inputs
            {"d", m * n, true}};
  }
  HostTensors make_inputs(const Problem& problem, std::uint64_t seed) const override {
    HostTensors host = KernelFamily::make_inputs(problem, seed);
    const auto named = named_tensors(problem, host);
    auto& sizes = named.at("group_sizes");
    const auto given = grouped_gemm::group_sizes_of(problem.dim("m"), problem.dim("experts"));
    std::copy(given.begin(), given.end(), sizes.begin());
    return host;
  }
  double flop_count(const Problem& problem) const override {
    return 2.0 * static_cast<double>(problem.dim("m")) * static_cast<double>(problem.dim("n")) *
           static_cast<double>(problem.dim("k"));
  }
  bool memory_bound() const override { return false; }
  // As gemm: fp32 sums over k up to 16384 carry a relative error of a few 1e-6 to 1e-5.
  double tolerance(Precision precision) const override {
    return precision == Precision::fp32 ? 5e-5 : default_tolerance(precision);
  }

  // As gemm's: past kFullReferenceFma multiply-adds, one row of every 64 of each group (the others
  // NaN, not checked), on all the host's threads.
  void reference(const Problem& problem, HostTensors& tensors) const override {
    const auto m = problem.dim("m"), n = problem.dim("n"), k = problem.dim("k"), experts = problem.dim("experts");
    const auto named = named_tensors(problem, tensors);
    const auto& a = named.at("a");
    const auto& b = named.at("b");
    const auto& sizes = named.at("group_sizes");
    auto& d = named.at("d");
    const bool sampled = static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) >
                         reference::kFullReferenceFma;
    if (sampled) std::fill(d.begin(), d.end(), std::numeric_limits<double>::quiet_NaN());
    std::vector<std::int64_t> rows, group_end;  // group_end[g]: one past group g's last row
    std::int64_t row = 0;
    for (std::int64_t g = 0; g < experts; ++g) {
      const auto count = static_cast<std::int64_t>(sizes[static_cast<std::size_t>(g)]);
      reference::append_rows(rows, row, count, sampled, 11 + g);
      row += count;
      group_end.push_back(row);
    }
    reference::for_each_row(rows, 0, [&](std::int64_t i, std::vector<double>&) {
      const auto g = std::upper_bound(group_end.begin(), group_end.end(), i) - group_end.begin();
      const double* weight = b.data() + g * n * k;
      const double* a_row = a.data() + i * k;
      for (std::int64_t j = 0; j < n; ++j) {
        double sum = 0;
        for (std::int64_t p = 0; p < k; ++p) sum += a_row[p] * weight[j * k + p];
        d[static_cast<std::size_t>(i * n + j)] = sum;
      }
    });
  }
  const CpuKernel* cpu_kernel() const override { return &grouped_gemm_cpu_kernel(); }
  // The wgmma path loads A by TMA from one view of every group's rows [m, k] and B from one view
  // of every expert's weight [experts·n, k], each group's GEMM offset into them.
  std::vector<TensorMapSpec> tensor_maps(const Problem& problem, const Config& config) const override {
    if (!config.has("path") || to_string(config.at("path")) != "wgmma") return {};
    const auto m = problem.dim("m"), experts = problem.dim("experts"), n = problem.dim("n"), k = problem.dim("k");
    return {gemm::wgmma_operand_map(0, m, k, config.get_int("block_m"), problem.precision),
            gemm::wgmma_operand_map(1, experts * n, k, config.get_int("block_n"), problem.precision)};
  }
  const GpuSource* cuda_source() const override {
    static constexpr GpuSource source{.file = "kernels/grouped_gemm/grouped_gemm.cu",
                                      .entry = "grouped_gemm_kernel",
                                      .portable = true};
    return &source;
  }
};

}  // namespace

const KernelFamily& grouped_gemm_family() {
  static const GroupedGemmFamily family;
  return family;
}

}  // namespace ktune
