#include "kernels/common/reference_row_stats.hpp"
#include "kernels/common/row_family.hpp"
#include "kernels/rmsnorm/rmsnorm.hpp"

namespace ktune {
namespace {

class RmsNormFamily final : public RowFamily {
 public:
  // Per element: square, accumulate, scale by the inverse RMS, multiply by the weight.
  RmsNormFamily()
      : RowFamily("rmsnorm", "RMSNorm over the last dim: x / sqrt(mean(x^2) + 1e-6) * weight", kNormalisedRows,
                  4.0) {}
  const CpuKernel* cpu_kernel() const override { return &rmsnorm_cpu_kernel(); }

 protected:
  std::vector<TensorSpec> row_tensors(std::int64_t rows, std::int64_t cols) const override {
    return {{"x", rows * cols, false},
            {"weight", cols, false, 0.5, 1.5},
            {"out", rows * cols, true}};
  }
  void row_reference(std::int64_t rows, std::int64_t cols,
                     const NamedTensors<std::vector<double>>& named) const override {
    const auto& x = named.at("x");
    const auto& weight = named.at("weight");
    auto& out = named.at("out");
    for (std::int64_t r = 0; r < rows; ++r) {
      const double* row = x.data() + r * cols;
      const double inv_rms = reference::inverse_rms(row, cols, kRmsNormEpsilon);
      for (std::int64_t c = 0; c < cols; ++c) out[r * cols + c] = row[c] * inv_rms * weight[c];
    }
  }
};

}  // namespace

const KernelFamily& rmsnorm_family() {
  static const RmsNormFamily family;
  return family;
}

}  // namespace ktune
