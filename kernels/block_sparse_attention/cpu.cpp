// Block-sparse attention on the CPU: flash attention's tiled run
// (kernels/flash_attention/cpu_flash_attention.hpp) skipping the blocks of keys the mask leaves
// out; a task's query rows and each of its blocks of keys lie in one block of the mask.
//
// Tunables (search_spaces/block_sparse_attention.cpu.json): threads, block_q, block_kv.
#include "kernels/block_sparse_attention/block_sparse_attention.hpp"
#include "kernels/common/cpu_shared_run.hpp"
#include "kernels/flash_attention/cpu_flash_attention.hpp"
#include "ktune/source_hash/block_sparse_attention_cpu.hpp"

namespace ktune {
namespace {

using flash_attention::CpuBlockMask;
using flash_attention::FlashAttentionRun;
using flash_attention::Tiling;

class BlockSparseAttentionCpu final : public CpuKernel {
 public:
  std::string source_hash() const override { return source_hash::block_sparse_attention_cpu; }

  std::function<void()> prepare(const CpuLaunchContext& context) const override {
    const Tiling tiling = Tiling::of(context.config);
    const block_sparse_attention::Shape shape = block_sparse_attention::Shape::of(context.problem);
    if (shape.block % tiling.block_q != 0 || shape.block % tiling.block_kv != 0)
      throw UnsupportedConfig("block_q and block_kv must divide the mask's block (" + std::to_string(shape.block) + ")");
    const CpuBlockMask mask{static_cast<const std::int32_t*>(context.tensor("block_mask").data), shape.q_blocks(),
                            shape.kv_blocks(), shape.block};
    return cpu::shared_run<FlashAttentionRun>(context.problem.precision, "the CPU block-sparse attention",
                                              shape.attention, tiling, context, mask);
  }
};

}  // namespace

const CpuKernel& block_sparse_attention_cpu_kernel() {
  static const BlockSparseAttentionCpu kernel;
  return kernel;
}

}  // namespace ktune
