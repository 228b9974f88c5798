#include <cmath>

#include "kernels/common/philox.hpp"
#include "kernels/common/reference_row_stats.hpp"
#include "kernels/common/row_family.hpp"
#include "kernels/softmax_dropout/softmax_dropout.hpp"

namespace ktune {
namespace {

class SoftmaxDropoutFamily final : public RowFamily {
 public:
  // Per element: softmax's 5 (compare for the max, subtract it, exp counted as one, accumulate
  // the sum, multiply by the inverse sum) and the dropout scale (1). The per-row division and the
  // integer work of the random number generator are not counted.
  SoftmaxDropoutFamily()
      : RowFamily("softmax_dropout",
                  "Softmax over the last dim + dropout (p = 0.1, Philox4x32-10 mask with 16 bits per element, seed "
                  "and offset from the rng tensor)",
                  kSoftmaxRows, 6.0) {}
  const CpuKernel* cpu_kernel() const override { return &softmax_dropout_cpu_kernel(); }

 protected:
  std::vector<TensorSpec> row_tensors(std::int64_t rows, std::int64_t cols) const override {
    // Any 31-bit seed and offset: every config is checked under a mask of the inputs' own.
    return {{"x", rows * cols, false, -8.0, 8.0},
            {"rng", 2, false, 0.0, 2147483647.0, Precision::int32},
            {"out", rows * cols, true}};
  }
  void row_reference(std::int64_t rows, std::int64_t cols,
                     const NamedTensors<std::vector<double>>& named) const override {
    const auto& x = named.at("x");
    const auto& rng = named.at("rng");
    const auto seed = static_cast<philox::u64>(static_cast<std::uint32_t>(static_cast<std::int64_t>(rng[0])));
    const auto offset = static_cast<philox::u64>(static_cast<std::uint32_t>(static_cast<std::int64_t>(rng[1])));
    auto& out = named.at("out");
    const double scale = 1.0 / (1.0 - kSoftmaxDropoutP);
    for (std::int64_t r = 0; r < rows; ++r) {
      const double* row = x.data() + r * cols;
      const reference::SoftmaxStats stats = reference::softmax_stats(row, cols);
      for (std::int64_t c = 0; c < cols; ++c) {
        const auto i = static_cast<std::uint64_t>(r * cols + c);
        const std::uint32_t bits = philox::element_bits(seed, offset, i);
        // u and the comparison in double: the kernels compare in float and must agree exactly.
        const double u = static_cast<double>(bits) / 65536.0;
        out[r * cols + c] = u >= kSoftmaxDropoutP ? std::exp(row[c] - stats.max) / stats.sum * scale : 0.0;
      }
    }
  }
};

}  // namespace

const KernelFamily& softmax_dropout_family() {
  static const SoftmaxDropoutFamily family;
  return family;
}

}  // namespace ktune
