// Flash attention's backward on the CPU, deterministic (no two tasks add into one output):
//   pass 1, a task per (sequence, kv head, block of block_kv keys): the block's keys and values
//     stay converted in float while every query row of the group that sees them streams through
//     in blocks of block_q (probabilities recomputed from lse, D_i = dout_i · o_i), adding into the
//     block's dk and dv;
//   pass 2, a task per (sequence, head, block of block_q query rows): the rows stay while the keys
//     they see stream through in blocks of block_kv, adding into their dq.
// Each pass recomputes the scores, so this does seven matrix products where a kernel that adds
// dq atomically does five; in exchange nothing is shared between tasks.
//
// Tunables (search_spaces/flash_attention_backward.cpu.json): threads, block_q, block_kv.
#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/common/cpu_numeric.hpp"
#include "kernels/common/cpu_shared_run.hpp"
#include "kernels/cpu_kernel.hpp"
#include "kernels/flash_attention/cpu_flash_attention.hpp"
#include "kernels/flash_attention/flash_attention.hpp"
#include "kernels/flash_attention_backward/flash_attention_backward.hpp"
#include "kernels/thread_pool.hpp"
#include "ktune/source_hash/flash_attention_backward_cpu.hpp"

namespace ktune {
namespace {

using flash_attention::Shape;
using flash_attention::Tiling;

// Rows [first, first + count) of a [rows, D] matrix in float, zeros past `rows`.
template <typename T>
void to_floats(const T* matrix, std::int64_t first, std::int64_t count, std::int64_t rows, std::int64_t D, float* out) {
  for (std::int64_t r = 0; r < count; ++r)
    for (std::int64_t d = 0; d < D; ++d)
      out[r * D + d] = first + r < rows ? cpu::to_float(matrix[(first + r) * D + d]) : 0.0f;
}

template <typename T>
class BackwardRun {
 public:
  BackwardRun(Shape shape, Tiling tiling, const CpuLaunchContext& context)
      : s_(shape), t_(tiling), pool_(context.pool),
        q_(static_cast<const T*>(context.tensor("q").data)), k_(static_cast<const T*>(context.tensor("k").data)),
        v_(static_cast<const T*>(context.tensor("v").data)), o_(static_cast<const T*>(context.tensor("o").data)),
        dout_(static_cast<const T*>(context.tensor("dout").data)),
        lse_(static_cast<const float*>(context.tensor("lse").data)),
        scale_(*static_cast<const float*>(context.tensor("scale").data)),
        dq_(static_cast<T*>(context.tensor("dq").data)), dk_(static_cast<T*>(context.tensor("dk").data)),
        dv_(static_cast<T*>(context.tensor("dv").data)),
        delta_(static_cast<std::size_t>(s_.batch * s_.heads * s_.seq_q)) {}

  void operator()() {
    const std::int64_t D = s_.head_dim;
    pool_.parallel_for(s_.batch * s_.heads, t_.threads, [&](std::int64_t bh) {
      for (std::int64_t i = 0; i < s_.seq_q; ++i) {
        const std::int64_t row = bh * s_.seq_q + i;
        float sum = 0;
        for (std::int64_t d = 0; d < D; ++d) sum += cpu::to_float(dout_[row * D + d]) * cpu::to_float(o_[row * D + d]);
        delta_[static_cast<std::size_t>(row)] = sum;
      }
    });
    const std::int64_t kv_blocks = (s_.seq_kv + t_.block_kv - 1) / t_.block_kv;
    pool_.parallel_for(s_.batch * s_.kv_heads * kv_blocks, t_.threads, [&](std::int64_t task) {
      thread_local std::vector<float> scratch;
      keys(task / kv_blocks, task % kv_blocks * t_.block_kv, scratch);
    });
    const std::int64_t q_blocks = (s_.seq_q + t_.block_q - 1) / t_.block_q;
    pool_.parallel_for(s_.batch * s_.heads * q_blocks, t_.threads, [&](std::int64_t task) {
      thread_local std::vector<float> scratch;
      queries(task / q_blocks, task % q_blocks * t_.block_q, scratch);
    });
  }

 private:
  // The probabilities P and dS of a tile of `rows` query rows (q, dout in float, their lse and D)
  // against `cols` keys (k, v in float) starting at key j0, into p and ds [rows][cols]; a key a row
  // does not see gets 0.
  void tile(const float* q, const float* dout, const float* lse, const float* delta, std::int64_t i0,
            std::int64_t rows, const float* k, const float* v, std::int64_t j0, std::int64_t cols, float* p,
            float* ds) const {
    const std::int64_t D = s_.head_dim;
    for (std::int64_t r = 0; r < rows; ++r) {
      const std::int64_t visible = std::min(cols, s_.keys_visible(i0 + r) - j0);
      for (std::int64_t c = 0; c < cols; ++c) {
        float prob = 0, grad = 0;
        if (c < visible) {
          float dot = 0, dp = 0;
          for (std::int64_t d = 0; d < D; ++d) {
            dot += q[r * D + d] * k[c * D + d];
            dp += dout[r * D + d] * v[c * D + d];
          }
          prob = std::exp(dot * scale_ - lse[r]);  // 0 for a row of no keys (lse = +inf)
          grad = prob * (dp - delta[r]);
        }
        p[r * cols + c] = prob;
        ds[r * cols + c] = grad;
      }
    }
  }

  // Pass 1: keys [j0, j0 + block_kv) of kv head bk (= batch * kv_heads + kv head).
  void keys(std::int64_t bk, std::int64_t j0, std::vector<float>& scratch) const {
    const std::int64_t D = s_.head_dim, BQ = t_.block_q, cols = std::min(t_.block_kv, s_.seq_kv - j0);
    const std::int64_t b = bk / s_.kv_heads, kh = bk % s_.kv_heads, group = s_.heads / s_.kv_heads;
    scratch.resize(static_cast<std::size_t>(4 * cols * D + 2 * BQ * D + 2 * BQ * cols));
    float* k = scratch.data();
    float* v = k + cols * D;
    float* dk = v + cols * D;
    float* dv = dk + cols * D;
    float* q = dv + cols * D;
    float* dout = q + BQ * D;
    float* p = dout + BQ * D;
    float* ds = p + BQ * cols;
    to_floats(k_ + bk * s_.seq_kv * D, j0, cols, s_.seq_kv, D, k);
    to_floats(v_ + bk * s_.seq_kv * D, j0, cols, s_.seq_kv, D, v);
    std::fill(dk, dk + 2 * cols * D, 0.0f);
    // The first query row that sees key j0 (bottom-right causal: i + seq_kv - seq_q >= j0).
    const std::int64_t first = s_.causal ? std::max<std::int64_t>(0, j0 - (s_.seq_kv - s_.seq_q)) : 0;
    for (std::int64_t h = kh * group; h < (kh + 1) * group; ++h) {
      const std::int64_t bh = b * s_.heads + h;
      for (std::int64_t i0 = first; i0 < s_.seq_q; i0 += BQ) {
        const std::int64_t rows = std::min(BQ, s_.seq_q - i0);
        to_floats(q_ + bh * s_.seq_q * D, i0, rows, s_.seq_q, D, q);
        to_floats(dout_ + bh * s_.seq_q * D, i0, rows, s_.seq_q, D, dout);
        tile(q, dout, lse_ + bh * s_.seq_q + i0, delta_.data() + bh * s_.seq_q + i0, i0, rows, k, v, j0, cols, p, ds);
        for (std::int64_t r = 0; r < rows; ++r)
          for (std::int64_t c = 0; c < cols; ++c) {
            const float pr = p[r * cols + c], dsr = ds[r * cols + c];
            if (pr == 0.0f && dsr == 0.0f) continue;
            for (std::int64_t d = 0; d < D; ++d) {
              dv[c * D + d] += pr * dout[r * D + d];
              dk[c * D + d] += dsr * q[r * D + d];
            }
          }
      }
    }
    for (std::int64_t c = 0; c < cols; ++c)
      for (std::int64_t d = 0; d < D; ++d) {
        dk_[(bk * s_.seq_kv + j0 + c) * D + d] = cpu::from_float<T>(dk[c * D + d] * scale_);
        dv_[(bk * s_.seq_kv + j0 + c) * D + d] = cpu::from_float<T>(dv[c * D + d]);
      }
  }

  // Pass 2: query rows [i0, i0 + block_q) of head bh (= batch * heads + head).
  void queries(std::int64_t bh, std::int64_t i0, std::vector<float>& scratch) const {
    const std::int64_t D = s_.head_dim, BKV = t_.block_kv, rows = std::min(t_.block_q, s_.seq_q - i0);
    const std::int64_t b = bh / s_.heads, bk = b * s_.kv_heads + bh % s_.heads / (s_.heads / s_.kv_heads);
    scratch.resize(static_cast<std::size_t>(3 * rows * D + 2 * BKV * D + 2 * rows * BKV));
    float* q = scratch.data();
    float* dout = q + rows * D;
    float* dq = dout + rows * D;
    float* k = dq + rows * D;
    float* v = k + BKV * D;
    float* p = v + BKV * D;
    float* ds = p + rows * BKV;
    to_floats(q_ + bh * s_.seq_q * D, i0, rows, s_.seq_q, D, q);
    to_floats(dout_ + bh * s_.seq_q * D, i0, rows, s_.seq_q, D, dout);
    std::fill(dq, dq + rows * D, 0.0f);
    const std::int64_t keys = s_.keys_visible(i0 + rows - 1);  // those the last (latest) row sees
    for (std::int64_t j0 = 0; j0 < keys; j0 += BKV) {
      const std::int64_t cols = std::min(BKV, keys - j0);
      to_floats(k_ + bk * s_.seq_kv * D, j0, cols, s_.seq_kv, D, k);
      to_floats(v_ + bk * s_.seq_kv * D, j0, cols, s_.seq_kv, D, v);
      tile(q, dout, lse_ + bh * s_.seq_q + i0, delta_.data() + bh * s_.seq_q + i0, i0, rows, k, v, j0, cols, p, ds);
      for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t c = 0; c < cols; ++c) {
          const float dsr = ds[r * cols + c];
          for (std::int64_t d = 0; d < D; ++d) dq[r * D + d] += dsr * k[c * D + d];
        }
    }
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t d = 0; d < D; ++d) dq_[(bh * s_.seq_q + i0 + r) * D + d] = cpu::from_float<T>(dq[r * D + d] * scale_);
  }

  Shape s_;
  Tiling t_;
  ThreadPool& pool_;
  const T* q_;
  const T* k_;
  const T* v_;
  const T* o_;
  const T* dout_;
  const float* lse_;
  const float scale_;
  T* dq_;
  T* dk_;
  T* dv_;
  std::vector<float> delta_;  // D_i per query row
};

class FlashAttentionBackwardCpu final : public CpuKernel {
 public:
  std::string source_hash() const override { return source_hash::flash_attention_backward_cpu; }

  std::function<void()> prepare(const CpuLaunchContext& context) const override {
    const Tiling tiling = Tiling::of(context.config);
    return cpu::shared_run<BackwardRun>(context.problem.precision, "the CPU attention backward",
                                        Shape::of(context.problem), tiling, context);
  }
};

}  // namespace

const CpuKernel& flash_attention_backward_cpu_kernel() {
  static const FlashAttentionBackwardCpu kernel;
  return kernel;
}

}  // namespace ktune
