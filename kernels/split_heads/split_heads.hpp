// The step between an attention block's fused QKV projection and its attention: the projection's
// output, one token per row with its query, key and value heads side by side, is split into the
// heads-first tensors flash attention reads, the queries and keys rotated by RoPE on the way.
//
// Tensors, row-major (inputs first):
//   qkv [batch * seq, (heads + 2 kv_heads) * head_dim]  the QKV projection's output
//   cos [seq, head_dim / 2]   rotation table of position s (the token's index in its sequence)
//   sin [seq, head_dim / 2]   (both read only when rope = 1)
//   q   [batch, heads, seq, head_dim]     (outputs)
//   k   [batch, kv_heads, seq, head_dim]
//   v   [batch, kv_heads, seq, head_dim]
//
// With rope = 1, each query and key head x is rotated as rmsnorm_rope rotates (the NeoX / Llama
// rotate_half convention, without its normalisation), half = head_dim / 2, i < half:
//   out[i]        = x[i] * cos[s, i] - x[i + half] * sin[s, i]
//   out[i + half] = x[i + half] * cos[s, i] + x[i] * sin[s, i]
// Values are copied as they are. head_dim must be even.
#pragma once

#include <cstdint>

#include "kernels/family.hpp"

namespace ktune {

const KernelFamily& split_heads_family();
const CpuKernel& split_heads_cpu_kernel();

namespace split_heads {

// The dims of one problem, kv_heads resolved (0 means as many as heads).
struct Shape {
  std::int64_t batch, seq, heads, kv_heads, head_dim;
  bool rope;
  std::int64_t slots() const { return heads + 2 * kv_heads; }  // head vectors per token
  std::int64_t half() const { return head_dim / 2; }
  // Where slot `slot` of token (b, s) goes: its tensor (0 q, 1 k, 2 v) and element offset there.
  struct Destination {
    int tensor;
    std::int64_t offset;
  };
  Destination destination(std::int64_t b, std::int64_t s, std::int64_t slot) const {
    if (slot < heads) return {0, ((b * heads + slot) * seq + s) * head_dim};
    if (slot < heads + kv_heads) return {1, ((b * kv_heads + slot - heads) * seq + s) * head_dim};
    return {2, ((b * kv_heads + slot - heads - kv_heads) * seq + s) * head_dim};
  }
};

// InputError for dims the family cannot take (kv_heads not dividing heads, odd head_dim, rope
// not 0 or 1).
Shape shape_of(const Problem& problem);

// The split in float64: qkv, cos and sin read, q, k and v written, in the layouts above (the
// family's reference, and the step of attention_block's).
void reference_split(const Shape& s, const double* qkv, const double* cos, const double* sin, double* q, double* k,
                     double* v);

}  // namespace split_heads
}  // namespace ktune
