// Flash attention, forward pass: O = softmax(scale * Q·Kᵀ + mask) · V per head, computed in
// tiles with an online softmax, so memory grows with the sequence, not with its square.
//
// Tensors, in kernel order (row-major, the logical layout of PyTorch's scaled_dot_product_attention):
//   q    [batch, heads,    seq_q,  head_dim] (input)
//   k    [batch, kv_heads, seq_kv, head_dim] (input)
//   v    [batch, kv_heads, seq_kv, head_dim] (input)
//   o    [batch, heads,    seq_q,  head_dim] (output)
//   lse  [batch, heads,    seq_q]            (output, always fp32): the natural-log log-sum-exp of
//        each row of scaled scores, what a backward pass needs to recompute the softmax.
//   scale [1]                                (input, always fp32): the softmax scale, read at run
//        time; callers pass 1/sqrt(head_dim) in the usual case. ktune's problems draw it from
//        [0.5, 1.5] / sqrt(head_dim), so a kernel that ignores it fails verification.
// q, k, v and o are in the problem's precision (fp32, fp16 or bf16); scores, softmax and sums in fp32.
//
// Grouped-query attention: head h reads kv head h / (heads / kv_heads); kv_heads = 0 means as
// many as heads (plain multi-head attention).
// Causal masking is aligned to the bottom right, as in FlashAttention 2 and KV-cache decoding:
// query i sees key j when j <= i + seq_kv - seq_q. A query that sees no key (seq_q > seq_kv)
// gets O = 0 and lse = +inf, so that exp(score - lse) is 0 in a backward pass.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "kernels/family.hpp"

namespace ktune {

const KernelFamily& flash_attention_family();
const CpuKernel& flash_attention_cpu_kernel();

namespace flash_attention {

struct Shape {
  std::int64_t batch, heads, kv_heads, seq_q, seq_kv, head_dim;
  bool causal;

  static Shape of(const Problem& problem);  // kv_heads resolved; InputError for a bad combination
  // The last key query `i` may see, plus one (0: none; seq_kv without a causal mask).
  std::int64_t keys_visible(std::int64_t i) const {
    if (!causal) return seq_kv;
    const std::int64_t last = i + seq_kv - seq_q;
    return last < 0 ? 0 : (last + 1 < seq_kv ? last + 1 : seq_kv);
  }
};

// The dims of attention (batch, heads, kv_heads, seq_q, seq_kv, head_dim, causal), shared by the
// forward, its backward and block-sparse attention.
std::vector<DimSpec> dims();

// Query row i of head h sees key j (besides the causal bound) when this holds; empty: every key.
using KeyFilter = std::function<bool(std::int64_t head, std::int64_t i, std::int64_t j)>;

// The float64 forward pass over the tensors q, k, v, scale (read) and o, lse (written) of a
// problem of shape `s`. A row that sees no key gets o = 0 and lse = +inf. Past
// reference::kFullReferenceFma multiply-adds only sampled rows are computed, the others left NaN.
void reference_forward(const Shape& s, const NamedTensors<std::vector<double>>& named, const KeyFilter& kept = {});

// The wgmma path's TMA maps of q, k and v (tensors 0, 1 and 2): rows of the head, boxes of
// block_q or block_kv rows by 64 elements; none for the other paths.
std::vector<TensorMapSpec> wgmma_tensor_maps(const Shape& s, const Config& config);

}  // namespace flash_attention
}  // namespace ktune
