#include <algorithm>
#include <limits>
#include <vector>

#include "kernels/common/reference_row_stats.hpp"
#include "kernels/common/reference_rows.hpp"
#include "kernels/gemm/gemm.hpp"
#include "kernels/layernorm_linear/layernorm_linear.hpp"

namespace ktune {
namespace {

using reference::kFullReferenceFma;  // past it, one row of every 64 (kernels/common/reference_rows.hpp)

class LayerNormLinearFamily final : public KernelFamily {
 public:
  std::string name() const override { return "layernorm_linear"; }
  std::string summary() const override {
    return "y = LayerNorm(x) * W^T + b (x [m,k], W [n,k] as nn.Linear), the normalisation applied while the GEMM "
           "loads x; fp32 accumulation";
  }
  std::vector<DimSpec> dims() const override {
    return {{"m", 256, "rows of x and y (tokens)"},
            {"n", 256, "output features (rows of W)"},
            {"k", 256, "input features, the normalised length (columns of x and W)"}};
  }
  std::optional<Precision> gpu_default_precision() const override { return Precision::bf16; }
  std::map<std::string, std::int64_t> gpu_default_shape() const override { return {{"m", 4096}, {"n", 4096}, {"k", 4096}}; }
  std::vector<Precision> precisions() const override { return {Precision::fp32, Precision::fp16, Precision::bf16}; }
  std::vector<TensorSpec> tensors(const Problem& problem) const override {
    const auto m = problem.dim("m"), n = problem.dim("n"), k = problem.dim("k");
    // x in [0.5, 2.5]: rows whose mean (about 1.5) is far from zero, which a kernel that skips or
    // misplaces the centring cannot hide.
    return {{"x", m * k, false, 0.5, 2.5},
            {"gamma", k, false, 0.5, 1.5},
            {"beta", k, false},
            {"w", n * k, false},
            {"bias", n, false},
            {"y", m * n, true}};
  }
  // The GEMM's multiply-adds, plus LayerNorm's 7 per element of x (kernels/layernorm).
  double flop_count(const Problem& problem) const override {
    const double m = static_cast<double>(problem.dim("m")), n = static_cast<double>(problem.dim("n")),
                 k = static_cast<double>(problem.dim("k"));
    return 2.0 * m * n * k + 7.0 * m * k;
  }
  bool memory_bound() const override { return false; }
  // As gemm: fp32 sums over k up to 16384 carry a relative error of a few 1e-6 to 1e-5.
  double tolerance(Precision precision) const override {
    return precision == Precision::fp32 ? 5e-5 : default_tolerance(precision);
  }

  void reference(const Problem& problem, HostTensors& tensors) const override {
    const auto m = problem.dim("m"), n = problem.dim("n"), k = problem.dim("k");
    const auto named = named_tensors(problem, tensors);
    const auto& x = named.at("x");
    const auto& gamma = named.at("gamma");
    const auto& beta = named.at("beta");
    const auto& w = named.at("w");
    const auto& bias = named.at("bias");
    auto& y = named.at("y");
    const bool sampled = static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) > kFullReferenceFma;
    if (sampled) std::fill(y.begin(), y.end(), std::numeric_limits<double>::quiet_NaN());  // not checked
    std::vector<std::int64_t> rows;
    reference::append_rows(rows, 0, m, sampled, 11);
    // Each thread's scratch row (k doubles) holds LN(x[r]).
    auto one_row = [&](std::int64_t r, std::vector<double>& normalised) {
      reference::layernorm_row(x.data() + r * k, gamma.data(), beta.data(), normalised.data(), k,
                               kLayerNormLinearEpsilon);
      for (std::int64_t j = 0; j < n; ++j) {
        const double* w_row = w.data() + j * k;
        double sum = 0;
        for (std::int64_t p = 0; p < k; ++p) sum += normalised[static_cast<std::size_t>(p)] * w_row[p];
        y[r * n + j] = sum + bias[j];
      }
    };
    reference::for_each_row(rows, static_cast<std::size_t>(k), one_row);
  }

  const CpuKernel* cpu_kernel() const override { return &layernorm_linear_cpu_kernel(); }
  const GpuSource* cuda_source() const override { return &cuda_source_; }
  const VulkanShader* vulkan_shader() const override { return &vulkan_shader_; }
  // On the wgmma path A is x, or LN(x) at the start of the workspace when normalise = written
  // (kernels/layernorm_linear/layernorm_linear.cu).
  std::vector<TensorMapSpec> tensor_maps(const Problem& problem, const Config& config) const override {
    const bool written = config.has("normalise") && to_string(config.at("normalise")) == "written";
    return gemm::wgmma_tensor_maps(problem, config, written ? TensorMapSpec::kWorkspace : 0, 3);
  }

 private:
  GpuSource cuda_source_{.file = "kernels/layernorm_linear/layernorm_linear.cu", .entry = "layernorm_linear_kernel",
                         .portable = true};
  VulkanShader vulkan_shader_{.file = "kernels/layernorm_linear/layernorm_linear.comp"};
};

}  // namespace

const KernelFamily& layernorm_linear_family() {
  static const LayerNormLinearFamily family;
  return family;
}

}  // namespace ktune
