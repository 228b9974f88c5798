// Flash attention on the CPU: the tiled run of kernels/flash_attention/cpu_flash_attention.hpp
// over every key up to the causal bound.
//
// Tunables (search_spaces/flash_attention.cpu.json): threads, block_q, block_kv.
#include "kernels/common/cpu_shared_run.hpp"
#include "kernels/flash_attention/cpu_flash_attention.hpp"
#include "ktune/source_hash/flash_attention_cpu.hpp"

namespace ktune {
namespace {

using flash_attention::FlashAttentionRun;
using flash_attention::Shape;
using flash_attention::Tiling;

class FlashAttentionCpu final : public CpuKernel {
 public:
  std::string source_hash() const override { return source_hash::flash_attention_cpu; }

  std::function<void()> prepare(const CpuLaunchContext& context) const override {
    const Tiling tiling = Tiling::of(context.config);
    const Shape shape = Shape::of(context.problem);
    return cpu::shared_run<FlashAttentionRun>(context.problem.precision, "the CPU flash attention", shape, tiling,
                                              context);
  }
};

}  // namespace

const CpuKernel& flash_attention_cpu_kernel() {
  static const FlashAttentionCpu kernel;
  return kernel;
}

}  // namespace ktune
