#include <algorithm>
#include <limits>
#include <vector>

#include "kernels/common/reference_rows.hpp"
#include "kernels/ffn/ffn.hpp"
#include "kernels/gemm/gemm.hpp"
#include "tuner/core/errors.hpp"

namespace ktune {
namespace {

using reference::kFullReferenceFma;  // past it, one row of every 64 (kernels/common/reference_rows.hpp)

class FfnFamily final : public KernelFamily {
 public:
  std::string name() const override { return "ffn"; }
  std::string summary() const override {
    return "MLP block y = act(x * W1^T + b1) * W2^T + b2 (x [m,k], W1 [f,k], W2 [k,f] as nn.Linear), act GELU, "
           "GELU-tanh or SiLU; fp32 accumulation, the hidden activation rounded to the precision between the GEMMs";
  }
  std::vector<DimSpec> dims() const override {
    return {{"m", 64, "rows of x and y (tokens)"},
            {"k", 128, "model width: columns of x and y"},
            {"f", 256, "hidden width of the MLP (4 k, or 14336 at k = 4096 in Llama 3 8B)"},
            {"activation", 0, "0: GELU (erf); 1: GELU, tanh approximation; 2: SiLU", 0, true}};
  }
  std::optional<Precision> gpu_default_precision() const override { return Precision::bf16; }
  std::map<std::string, std::int64_t> gpu_default_shape() const override {
    return {{"m", 4096}, {"k", 4096}, {"f", 16384}};
  }
  std::vector<Precision> precisions() const override { return {Precision::fp32, Precision::fp16, Precision::bf16}; }
  std::vector<TensorSpec> tensors(const Problem& problem) const override {
    const auto m = problem.dim("m"), k = problem.dim("k"), f = problem.dim("f");
    const auto activation = problem.dim("activation");
    if (activation >= ffn::kActivationCount)
      throw InputError("ffn: activation must be 0 (GELU), 1 (GELU, tanh approximation) or 2 (SiLU), not " +
                       std::to_string(activation));
    return {{"x", m * k, false},  {"w1", f * k, false}, {"b1", f, false},
            {"w2", k * f, false}, {"b2", k, false},     {"y", m * k, true}};
  }
  double flop_count(const Problem& problem) const override {
    return 4.0 * static_cast<double>(problem.dim("m")) * static_cast<double>(problem.dim("k")) *
           static_cast<double>(problem.dim("f"));
  }
  bool memory_bound() const override { return false; }
  // Two chained fp32 sums over up to 16384 terms each.
  double tolerance(Precision precision) const override {
    return precision == Precision::fp32 ? 1e-4 : default_tolerance(precision);
  }

  void reference(const Problem& problem, HostTensors& tensors) const override {
    const auto m = problem.dim("m"), k = problem.dim("k"), f = problem.dim("f");
    const int activation = static_cast<int>(problem.dim("activation"));
    const auto named = named_tensors(problem, tensors);
    const auto& x = named.at("x");
    const auto& w1 = named.at("w1");
    const auto& b1 = named.at("b1");
    const auto& w2 = named.at("w2");
    const auto& b2 = named.at("b2");
    auto& y = named.at("y");
    const bool sampled = 2.0 * static_cast<double>(m) * static_cast<double>(k) * static_cast<double>(f) > kFullReferenceFma;
    if (sampled) std::fill(y.begin(), y.end(), std::numeric_limits<double>::quiet_NaN());  // not checked
    std::vector<std::int64_t> rows;
    reference::append_rows(rows, 0, m, sampled, 11);
    auto one_row = [&](std::int64_t r, std::vector<double>& hidden) {
      const double* x_row = x.data() + r * k;
      for (std::int64_t h = 0; h < f; ++h) {
        const double* w_row = w1.data() + h * k;
        double sum = 0;
        for (std::int64_t p = 0; p < k; ++p) sum += x_row[p] * w_row[p];
        hidden[static_cast<std::size_t>(h)] = ffn::activate<double>(activation, sum + b1[h]);
      }
      for (std::int64_t j = 0; j < k; ++j) {
        const double* w_row = w2.data() + j * f;
        double sum = 0;
        for (std::int64_t h = 0; h < f; ++h) sum += hidden[static_cast<std::size_t>(h)] * w_row[h];
        y[r * k + j] = sum + b2[j];
      }
    };
    reference::for_each_row(rows, static_cast<std::size_t>(f), one_row);
  }

  const CpuKernel* cpu_kernel() const override { return &ffn_cpu_kernel(); }
  const GpuSource* cuda_source() const override { return &cuda_source_; }
  // The wgmma path's operands: x and W1 for H = act(x·W1ᵀ + b1), then H (at the start of the
  // workspace) and W2 for y (kernels/ffn/ffn.cu).
  std::vector<TensorMapSpec> tensor_maps(const Problem& problem, const Config& config) const override {
    if (!config.has("path") || to_string(config.at("path")) != "wgmma") return {};
    const auto m = problem.dim("m"), k = problem.dim("k"), f = problem.dim("f");
    const auto block_m = config.get_int("block_m"), block_n = config.get_int("block_n");
    return {gemm::wgmma_operand_map(0, m, k, block_m, problem.precision),
            gemm::wgmma_operand_map(1, f, k, block_n, problem.precision),
            gemm::wgmma_operand_map(TensorMapSpec::kWorkspace, m, f, block_m, problem.precision),
            gemm::wgmma_operand_map(3, k, f, block_n, problem.precision)};
  }

 private:
  GpuSource cuda_source_{.file = "kernels/ffn/ffn.cu", .entry = "ffn_kernel", .portable = true};
};

}  // namespace

const KernelFamily& ffn_family() {
  static const FfnFamily family;
  return family;
}

}  // namespace ktune
