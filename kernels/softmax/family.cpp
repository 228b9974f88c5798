#include <cmath>

#include "kernels/common/reference_row_stats.hpp"
#include "kernels/common/row_family.hpp"
#include "kernels/softmax/softmax.hpp"

namespace ktune {
namespace {

class SoftmaxFamily final : public RowFamily {
 public:
  // Per element: compare for the max, subtract it, exp (counted as one), accumulate the sum,
  // multiply by the inverse sum (5). The per-row division is not counted.
  SoftmaxFamily()
      : RowFamily("softmax", "Softmax over the last dim, stable: exp(x - max) / sum(exp(x - max))", kSoftmaxRows,
                  5.0) {}
  const CpuKernel* cpu_kernel() const override { return &softmax_cpu_kernel(); }

 protected:
  std::vector<TensorSpec> row_tensors(std::int64_t rows, std::int64_t cols) const override {
    // Logits in [-8, 8]: the row's terms span e^16, so max subtraction and the exp tails matter.
    return {{"x", rows * cols, false, -8.0, 8.0}, {"out", rows * cols, true}};
  }
  void row_reference(std::int64_t rows, std::int64_t cols,
                     const NamedTensors<std::vector<double>>& named) const override {
    const auto& x = named.at("x");
    auto& out = named.at("out");
    for (std::int64_t r = 0; r < rows; ++r) {
      const double* row = x.data() + r * cols;
      const reference::SoftmaxStats stats = reference::softmax_stats(row, cols);
      for (std::int64_t c = 0; c < cols; ++c) out[r * cols + c] = std::exp(row[c] - stats.max) / stats.sum;
    }
  }
};

}  // namespace

const KernelFamily& softmax_family() {
  static const SoftmaxFamily family;
  return family;
}

}  // namespace ktune
