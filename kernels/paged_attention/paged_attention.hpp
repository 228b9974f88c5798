// Decode attention over a paged KV cache (vLLM's and FlashInfer's layout): one query token per
// sequence attends to that sequence's cached keys and values, which live in fixed-size pages
// scattered over a shared pool and are found through a block table.
//
//   q           [batch, heads, head_dim]
//   k_cache     [num_pages, page_size, kv_heads, head_dim]   (num_pages = batch * max_pages)
//   v_cache     [num_pages, page_size, kv_heads, head_dim]
//   block_table [batch, max_pages] int32: page p of sequence b is k_cache[block_table[b, p]]
//   seq_lens    [batch] int32: the cached tokens of each sequence (1 .. seq_kv)
//   scale       [1] fp32 (1/sqrt(head_dim) by default)
//   o           [batch, heads, head_dim]  = softmax(scale q·Kᵀ) V over the sequence's tokens
//   lse         [batch, heads] fp32       = log-sum-exp of the scaled scores
//
// Grouped-query: query head h reads kv head h / (heads / kv_heads). Sequence b holds
// sequence_length(b, seq_kv) tokens: the first sequence the full seq_kv, the others 3/4 to all
// of it (a decode batch is ragged), the same in the inputs, the reference and the byte count.
// Block table entries past a sequence's pages are -1: a kernel never follows them. A length past
// max_pages * page_size counts as that many; a sequence of no tokens gets o = 0, lse = -inf.
#pragma once

#include <algorithm>
#include <cstdint>

#include "kernels/family.hpp"

namespace ktune {
namespace paged_attention {

struct Shape {
  std::int64_t batch, heads, kv_heads, head_dim, page_size, seq_kv;
  std::int64_t max_pages() const { return (seq_kv + page_size - 1) / page_size; }
  std::int64_t num_pages() const { return batch * max_pages(); }
  std::int64_t group() const { return heads / kv_heads; }
  static Shape of(const Problem& problem);  // InputError for kv_heads not dividing heads
};

// Tokens cached for sequence b: seq_kv for b = 0, then a spread over [seq_kv - seq_kv/4, seq_kv].
inline std::int64_t sequence_length(std::int64_t b, std::int64_t seq_kv) {
  const std::int64_t spread = seq_kv / 4 + 1;
  return std::max<std::int64_t>(1, seq_kv - (b * 7919) % spread);
}

}  // namespace paged_attention

const KernelFamily& paged_attention_family();
const CpuKernel& paged_attention_cpu_kernel();

}  // namespace ktune
