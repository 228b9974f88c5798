// Block-sparse attention: flash attention's forward (kernels/flash_attention/flash_attention.hpp:
// q, k, v, o, lse, scale, grouped-query heads, the bottom-right causal option) whose work follows
// a block mask: query row i of head h sees key j only where block (i / block, j / block) of the
// head's mask is kept.
//
//   block_mask [heads, ceil(seq_q / block), ceil(seq_kv / block)] int32, nonzero: kept; one mask
//              per head, the same for every sequence of the batch
//
// A row that sees no key gets o = 0 and lse = +inf. Blocks that are off cost nothing: kernels never
// load their keys, and the FLOP count holds only the kept (and causally visible) pairs.
//
// The inputs' masks, from the problem alone (so the FLOP count knows them):
//   pattern 0 - each block kept with probability density_percent (a hash of head and block);
//   pattern 1 - a sliding window: each query block keeps the blocks of keys on and before its
//               diagonal, about density_percent of a row, plus the first block (global tokens).
#pragma once

#include <cstdint>

#include "kernels/family.hpp"
#include "kernels/flash_attention/flash_attention.hpp"

namespace ktune {
namespace block_sparse_attention {

struct Shape {
  flash_attention::Shape attention;
  std::int64_t block, density_percent, pattern;
  std::int64_t q_blocks() const { return (attention.seq_q + block - 1) / block; }
  std::int64_t kv_blocks() const { return (attention.seq_kv + block - 1) / block; }
  static Shape of(const Problem& problem);  // InputError for a pattern or density out of range
  // Whether the inputs' mask keeps block (qb, kb) of head h.
  bool kept(std::int64_t h, std::int64_t qb, std::int64_t kb) const;
};

}  // namespace block_sparse_attention

const KernelFamily& block_sparse_attention_family();
const CpuKernel& block_sparse_attention_cpu_kernel();

}  // namespace ktune
