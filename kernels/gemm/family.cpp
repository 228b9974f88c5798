#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/common/reference_rows.hpp"
#include "kernels/gemm/gemm.hpp"
#include "tuner/core/errors.hpp"

namespace ktune {
namespace {

using reference::kFullReferenceFma;  // past it, one row of every 64 (kernels/common/reference_rows.hpp)

class GemmFamily final : public KernelFamily {
 public:
  std::string name() const override { return "gemm"; }
  std::string summary() const override {
    return "GEMM D = epilogue(alpha*A*B, beta*C, bias), A [m,k], B [n,k] (nn.Linear) or [k,n], fp32 accumulation";
  }
  std::vector<DimSpec> dims() const override {
    return {{"m", 1024, "rows of A and D (tokens)"},
            {"n", 1024, "columns of D (output features)"},
            {"k", 1024, "reduction length (input features)"},
            {"b_layout", 0, "0: B is [n,k] (nn.Linear weight, K-major); 1: B is [k,n]", 0},
            {"epilogue", 0, "0: alpha*AB; 1: + beta*C; 2: + bias; 3: gelu(alpha*AB + bias); 4: silu(alpha*AB + bias); "
                         "5: + bias + beta*C (output projection with residual)", 0}};
  }
  // A 4096-wide projection of a 4096-token batch, in bf16: what a GPU tune of a GEMM is for.
  std::optional<Precision> gpu_default_precision() const override { return Precision::bf16; }
  std::map<std::string, std::int64_t> gpu_default_shape() const override { return {{"m", 4096}, {"n", 4096}, {"k", 4096}}; }
  std::vector<Precision> precisions() const override {
    return {Precision::fp32, Precision::tf32, Precision::fp16, Precision::bf16, Precision::fp8_e4m3};
  }
  std::vector<TensorSpec> tensors(const Problem& problem) const override {
    const auto m = problem.dim("m"), n = problem.dim("n"), k = problem.dim("k");
    const auto layout = problem.dim("b_layout"), epilogue = problem.dim("epilogue");
    if (layout > 1) throw InputError("gemm: b_layout must be 0 ([n,k]) or 1 ([k,n]), not " + std::to_string(layout));
    if (epilogue >= gemm::kEpilogueCount)
      throw InputError("gemm: epilogue must be 0 (alpha*AB), 1 (+ beta*C), 2 (+ bias), 3 (gelu(alpha*AB + bias)), 4 "
                       "(silu(alpha*AB + bias)) or 5 (+ bias + beta*C), not " + std::to_string(epilogue));
    // alpha and beta in [0.5, 1.5]: a kernel that ignores either is off by far more than any tolerance.
    return {{"a", m * k, false},
            {"b", n * k, false},
            {"c", gemm::reads_c(static_cast<int>(epilogue)) ? m * n : 1, false},
            {"bias", n, false},
            {"scalars", 2, false, 0.5, 1.5},
            {"d", m * n, true}};
  }
  double flop_count(const Problem& problem) const override {
    return 2.0 * static_cast<double>(problem.dim("m")) * static_cast<double>(problem.dim("n")) *
           static_cast<double>(problem.dim("k"));
  }
  bool memory_bound() const override { return false; }
  // fp32 products summed over k up to 16384 in fp32 carry a relative error of a few 1e-6 to 1e-5.
  // An fp8 output rounds each element by up to 1/16 of its value (3 mantissa bits): a 1x1 product
  // may be off by 6.25%, just past the default 6%.
  double tolerance(Precision precision) const override {
    if (precision == Precision::fp32) return 5e-5;
    if (precision == Precision::fp8_e4m3) return 0.07;
    return default_tolerance(precision);
  }

  void reference(const Problem& problem, HostTensors& tensors) const override {
    const auto m = problem.dim("m"), n = problem.dim("n"), k = problem.dim("k");
    const bool b_is_nk = problem.dim("b_layout") == 0;
    const int epilogue = static_cast<int>(problem.dim("epilogue"));
    const auto named = named_tensors(problem, tensors);
    const auto& a = named.at("a");
    const auto& b = named.at("b");
    const auto& c = named.at("c");
    const auto& bias = named.at("bias");
    const auto& scalars = named.at("scalars");
    const double alpha = scalars[0], beta = scalars[1];
    auto& d = named.at("d");

    const bool sampled = static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) > kFullReferenceFma;
    if (sampled) std::fill(d.begin(), d.end(), std::numeric_limits<double>::quiet_NaN());  // not checked
    std::vector<std::int64_t> rows;
    reference::append_rows(rows, 0, m, sampled, 11);
    auto one_row = [&](std::int64_t r, std::vector<double>& acc) {
      std::fill(acc.begin(), acc.end(), 0.0);
      const double* a_row = a.data() + r * k;
      if (b_is_nk) {
        for (std::int64_t j = 0; j < n; ++j) {
          const double* b_row = b.data() + j * k;
          double sum = 0;
          for (std::int64_t p = 0; p < k; ++p) sum += a_row[p] * b_row[p];
          acc[j] = sum;
        }
      } else {
        for (std::int64_t p = 0; p < k; ++p) {
          const double x = a_row[p];
          const double* b_row = b.data() + p * n;
          for (std::int64_t j = 0; j < n; ++j) acc[j] += x * b_row[j];
        }
      }
      for (std::int64_t j = 0; j < n; ++j)
        d[r * n + j] = gemm::apply_epilogue<double>(epilogue, acc[j], alpha, beta,
                                                    gemm::reads_c(epilogue) ? c[r * n + j] : 0.0, bias[j]);
    };
    reference::for_each_row(rows, static_cast<std::size_t>(n), one_row);
  }

  const CpuKernel* cpu_kernel() const override { return &gemm_cpu_kernel(); }
  const GpuSource* cuda_source() const override {
    static constexpr GpuSource source{.file = "kernels/gemm/gemm.cu",
                                      .entry = "gemm_kernel",
                                      .portable = true};
    return &source;
  }
  const VulkanShader* vulkan_shader() const override {
    static constexpr VulkanShader shader{.file = "kernels/gemm/gemm.comp"};
    return &shader;
  }
  std::vector<TensorMapSpec> tensor_maps(const Problem& problem, const Config& config) const override {
    return gemm::wgmma_tensor_maps(problem, config, 0, 1);
  }
};


}  // namespace

std::vector<TensorMapSpec> gemm::wgmma_tensor_maps(const Problem& problem, const Config& config, int a_tensor,
                                                   int b_tensor) {
  if (!config.has("path") || to_string(config.at("path")) != "wgmma") return {};
  const auto m = problem.dim("m"), n = problem.dim("n"), k = problem.dim("k");
  const auto cluster_m = config.has("cluster_m") ? config.get_int("cluster_m") : 1;
  return {wgmma_operand_map(a_tensor, m, k, config.get_int("block_m"), problem.precision),
          wgmma_operand_map(b_tensor, n, k, config.get_int("block_n") / cluster_m, problem.precision)};
}

TensorMapSpec gemm::wgmma_operand_map(int tensor, std::int64_t rows, std::int64_t k, std::int64_t box_rows,
                                      Precision precision) {
  return {tensor, rows, k, static_cast<int>(box_rows), 128 / element_bytes(precision), 128};
}

const KernelFamily& gemm_family() {
  static const GemmFamily family;
  return family;
}

}  // namespace ktune
