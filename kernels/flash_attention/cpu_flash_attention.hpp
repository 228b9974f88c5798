// Flash attention on the CPU, tiled the way the GPU kernels are: a task takes block_q query rows
// of one head, converts them to float once, and streams the head's keys and values through in
// blocks of block_kv: scores for the block, an online-softmax update of each row's maximum and
// sum, and the block's values added into float accumulators rescaled by the new maximum. Each
// key/value block is converted to float once and reused by all block_q rows while it is in
// cache. No seq_q x seq_kv matrix is ever stored: a task holds (block_q + block_kv) x 2 head_dim
// + block_q x block_kv floats. Shared by flash_attention and block_sparse_attention (which skips
// the blocks of keys its mask leaves out).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "kernels/common/cpu_numeric.hpp"
#include "kernels/cpu_kernel.hpp"
#include "kernels/flash_attention/flash_attention.hpp"
#include "kernels/thread_pool.hpp"

namespace ktune::flash_attention {

// The attention CPU kernels' tunables (threads, query rows and keys per block), read from a config.
struct Tiling {
  int threads;
  std::int64_t block_q, block_kv;

  static Tiling of(const Config& config) {
    const Tiling tiling{static_cast<int>(config.get_int("threads")), config.get_int("block_q"),
                        config.get_int("block_kv")};
    if (tiling.threads < 1 || tiling.block_q < 1 || tiling.block_kv < 1)
      throw UnsupportedConfig("threads, block_q and block_kv must be at least 1");
    return tiling;
  }
};

// Block-sparse attention's mask (kernels/block_sparse_attention/): [heads][q_blocks][kv_blocks]
// int32 over blocks of `size` query rows by `size` keys; a task's rows lie in one row of it and
// each of its blocks of keys in one column (size is a multiple of block_q and of block_kv).
// Without blocks, every key up to the causal bound is seen.
struct CpuBlockMask {
  const std::int32_t* blocks = nullptr;
  std::int64_t q_blocks = 0, kv_blocks = 0, size = 1;
  bool keeps(std::int64_t head, std::int64_t i0, std::int64_t j0) const {
    return blocks == nullptr || blocks[(head * q_blocks + i0 / size) * kv_blocks + j0 / size] != 0;
  }
};

template <typename T>
class FlashAttentionRun {
 public:
  FlashAttentionRun(Shape shape, Tiling tiling, const CpuLaunchContext& context, CpuBlockMask mask = {})
      : s_(shape), t_(tiling), mask_(mask), pool_(context.pool),
        q_(static_cast<const T*>(context.tensor("q").data)),
        k_(static_cast<const T*>(context.tensor("k").data)),
        v_(static_cast<const T*>(context.tensor("v").data)),
        o_(static_cast<T*>(context.tensor("o").data)),
        lse_(static_cast<float*>(context.tensor("lse").data)),
        scale_(*static_cast<const float*>(context.tensor("scale").data)) {}

  void operator()() {
    const std::int64_t q_blocks = (s_.seq_q + t_.block_q - 1) / t_.block_q;
    pool_.parallel_for(s_.batch * s_.heads * q_blocks, t_.threads, [&](std::int64_t task) {
      thread_local std::vector<float> scratch;
      tile(task / q_blocks, task % q_blocks * t_.block_q, scratch);
    });
  }

 private:
  // Rows [i0, i0 + block_q) of head bh (= batch * heads + head).
  void tile(std::int64_t bh, std::int64_t i0, std::vector<float>& scratch) const {
    const std::int64_t D = s_.head_dim, rows = std::min(t_.block_q, s_.seq_q - i0);
    const std::int64_t head = bh % s_.heads, batch = bh / s_.heads;
    const std::int64_t kv_base = (batch * s_.kv_heads + head / (s_.heads / s_.kv_heads)) * s_.seq_kv * D;
    scratch.resize(static_cast<std::size_t>(t_.block_q * (2 * D + t_.block_kv + 2) + 2 * t_.block_kv * D));
    float* q = scratch.data();                   // [rows][D], scaled so exp2 gives the softmax
    float* acc = q + t_.block_q * D;             // [rows][D]
    float* scores = acc + t_.block_q * D;        // [rows][block_kv]
    float* max = scores + t_.block_q * t_.block_kv;  // running maximum per row (log2 units)
    float* sum = max + t_.block_q;               // running sum per row
    float* k_block = sum + t_.block_q;           // [block_kv][D]
    float* v_block = k_block + t_.block_kv * D;  // [block_kv][D]
    const float scale_log2 = static_cast<float>(1.4426950408889634 * scale_);
    for (std::int64_t r = 0; r < rows; ++r) {
      for (std::int64_t d = 0; d < D; ++d) q[r * D + d] = cpu::to_float(q_[(bh * s_.seq_q + i0 + r) * D + d]) * scale_log2;
      std::fill(acc + r * D, acc + (r + 1) * D, 0.0f);
      max[r] = -std::numeric_limits<float>::infinity();
      sum[r] = 0;
    }
    // Keys any row of the tile sees: up to those of its last row.
    const std::int64_t keys = s_.keys_visible(i0 + rows - 1);
    for (std::int64_t j0 = 0; j0 < keys; j0 += t_.block_kv) {
      if (!mask_.keeps(head, i0, j0)) continue;  // a block the mask leaves out costs nothing
      const std::int64_t cols = std::min(t_.block_kv, keys - j0);
      for (std::int64_t e = 0; e < cols * D; ++e) {
        k_block[e] = cpu::to_float(k_[kv_base + j0 * D + e]);
        v_block[e] = cpu::to_float(v_[kv_base + j0 * D + e]);
      }
      for (std::int64_t r = 0; r < rows; ++r) {
        const std::int64_t visible = std::min(cols, s_.keys_visible(i0 + r) - j0);  // this row's keys in the block
        if (visible <= 0) continue;
        float* score = scores + r * t_.block_kv;
        float block_max = -std::numeric_limits<float>::infinity();
        for (std::int64_t j = 0; j < visible; ++j) {
          const float* k_row = k_block + j * D;
          float dot = 0;
          for (std::int64_t d = 0; d < D; ++d) dot += q[r * D + d] * k_row[d];
          score[j] = dot;
          block_max = std::max(block_max, dot);
        }
        const float new_max = std::max(max[r], block_max);
        const float rescale = std::exp2(max[r] - new_max);  // 0 on the first block (max = -inf)
        max[r] = new_max;
        float block_sum = 0;
        for (std::int64_t j = 0; j < visible; ++j) {
          score[j] = std::exp2(score[j] - new_max);
          block_sum += score[j];
        }
        sum[r] = sum[r] * rescale + block_sum;
        float* acc_row = acc + r * D;
        for (std::int64_t d = 0; d < D; ++d) acc_row[d] *= rescale;
        for (std::int64_t j = 0; j < visible; ++j) {
          const float* v_row = v_block + j * D;
          const float p = score[j];
          for (std::int64_t d = 0; d < D; ++d) acc_row[d] += p * v_row[d];
        }
      }
    }
    for (std::int64_t r = 0; r < rows; ++r) {
      const std::int64_t row = bh * s_.seq_q + i0 + r;
      const bool empty = sum[r] == 0;  // a query that sees no key (causal, seq_q > seq_kv; a mask)
      const float inverse = empty ? 0.0f : 1.0f / sum[r];
      for (std::int64_t d = 0; d < D; ++d) o_[row * D + d] = cpu::from_float<T>(acc[r * D + d] * inverse);
      lse_[row] = empty ? std::numeric_limits<float>::infinity()
                        : (max[r] + std::log2(sum[r])) * 0.69314718055994531f;
    }
  }

  Shape s_;
  Tiling t_;
  CpuBlockMask mask_;
  ThreadPool& pool_;
  const T* q_;
  const T* k_;
  const T* v_;
  T* o_;
  float* lse_;
  const float scale_;  // the softmax scale
};

}  // namespace ktune::flash_attention
