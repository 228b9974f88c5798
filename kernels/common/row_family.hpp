// The base of the families whose problem is a [rows, cols] matrix worked on row by row
// (normalisations, softmax, gated activations). It holds what they share: the dims "rows" and
// "cols" (defaults 2048 x 4096), the fp32/fp16/bf16 precisions, a FLOP count of a fixed number
// per element, and the GPU sources at their conventional places: kernels/<name>/<name>.cu with
// the entry <name>_kernel (portable to HIP) and kernels/<name>/<name>.comp.
//
// A family gives its tensors and its float64 reference in terms of rows and cols.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "kernels/family.hpp"

namespace ktune {

// The help texts of the two dims.
struct RowDimsHelp {
  const char* rows;
  const char* cols;
};

inline constexpr RowDimsHelp kNormalisedRows{"independent rows (tokens)", "normalised width (hidden size)"};
inline constexpr RowDimsHelp kSoftmaxRows{"independent rows (e.g. batch * heads * queries)",
                                          "softmax width (e.g. keys)"};
inline constexpr RowDimsHelp kGatedRows{"independent rows (tokens)", "output width (intermediate size)"};

class RowFamily : public KernelFamily {
 public:
  RowFamily(std::string name, std::string summary, RowDimsHelp help, double flops_per_element)
      : name_(std::move(name)),
        summary_(std::move(summary)),
        help_(help),
        flops_per_element_(flops_per_element),
        cuda_file_("kernels/" + name_ + "/" + name_ + ".cu"),
        cuda_entry_(name_ + "_kernel"),
        shader_file_("kernels/" + name_ + "/" + name_ + ".comp"),
        cuda_source_{.file = cuda_file_, .entry = cuda_entry_, .portable = true},
        vulkan_shader_{.file = shader_file_} {}
  // The sources point into the strings above.
  RowFamily(const RowFamily&) = delete;
  RowFamily& operator=(const RowFamily&) = delete;

  std::string name() const final { return name_; }
  std::string summary() const final { return summary_; }
  std::vector<DimSpec> dims() const final { return {{"rows", 2048, help_.rows}, {"cols", 4096, help_.cols}}; }
  std::vector<Precision> precisions() const final { return {Precision::fp32, Precision::fp16, Precision::bf16}; }
  std::vector<TensorSpec> tensors(const Problem& problem) const final {
    return row_tensors(problem.dim("rows"), problem.dim("cols"));
  }
  double flop_count(const Problem& problem) const final {
    return flops_per_element_ * static_cast<double>(problem.dim("rows")) * static_cast<double>(problem.dim("cols"));
  }
  void reference(const Problem& problem, HostTensors& tensors) const final {
    row_reference(problem.dim("rows"), problem.dim("cols"), named_tensors(problem, tensors));
  }
  const GpuSource* cuda_source() const final { return &cuda_source_; }
  const VulkanShader* vulkan_shader() const final { return &vulkan_shader_; }

 protected:
  virtual std::vector<TensorSpec> row_tensors(std::int64_t rows, std::int64_t cols) const = 0;
  // The float64 reference: reads the inputs of `named` and writes its outputs.
  virtual void row_reference(std::int64_t rows, std::int64_t cols,
                             const NamedTensors<std::vector<double>>& named) const = 0;

  // The reference of a gated family: out[r, c] = gated(gate, up), with gate and up the two halves
  // of row r of x [rows, 2*cols].
  template <typename Gated>
  static void for_each_gate(std::int64_t rows, std::int64_t cols, const NamedTensors<std::vector<double>>& named,
                            Gated gated) {
    const auto& x = named.at("x");
    auto& out = named.at("out");
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t c = 0; c < cols; ++c)
        out[r * cols + c] = gated(x[r * 2 * cols + c], x[r * 2 * cols + cols + c]);
  }

 private:
  std::string name_;
  std::string summary_;
  RowDimsHelp help_;
  double flops_per_element_;
  std::string cuda_file_;
  std::string cuda_entry_;
  std::string shader_file_;
  GpuSource cuda_source_;
  VulkanShader vulkan_shader_;
};

}  // namespace ktune
