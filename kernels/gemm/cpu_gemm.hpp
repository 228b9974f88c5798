// The CPU GEMM's blocked loop (kernels/gemm/cpu.cpp describes it), shared with the families that
// are a GEMM with something fused into it: layernorm_linear normalises A's rows while packing them.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <type_traits>
#include <vector>

#include "kernels/common/cpu_dispatch.hpp"
#include "kernels/common/cpu_numeric.hpp"
#include "kernels/cpu_kernel.hpp"
#include "kernels/gemm/gemm.hpp"
#include "kernels/common/cpu_row_stats.hpp"
#include "kernels/thread_pool.hpp"

namespace ktune::cpu_gemm {

using MicroKernel = void (*)(std::int64_t kc, const float* a_panel, const float* b_panel, float* c, std::int64_t ldc,
                             std::int64_t rows, std::int64_t cols);

// c[rows x cols] += A panel (kc x MR, column after column) times B panel (kc x NR, row after row).
// Full tiles are written straight back; edge tiles only where they exist.
template <int MR, int NR>
void micro_kernel(std::int64_t kc, const float* a_panel, const float* b_panel, float* c, std::int64_t ldc,
                  std::int64_t rows, std::int64_t cols) {
  float acc[MR][NR] = {};
  for (std::int64_t p = 0; p < kc; ++p) {
    const float* a = a_panel + p * MR;
    const float* b = b_panel + p * NR;
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i)
#pragma GCC unroll 32
      for (int j = 0; j < NR; ++j) acc[i][j] += a[i] * b[j];
  }
  if (rows == MR && cols == NR) {
    for (int i = 0; i < MR; ++i)
      for (int j = 0; j < NR; ++j) c[i * ldc + j] += acc[i][j];
    return;
  }
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j) c[i * ldc + j] += acc[i][j];
}

inline constexpr cpu::IntChoices<4, 6, 8> kMicroM{};
inline constexpr cpu::IntChoices<8, 16, 32> kMicroN{};

struct Shape {
  std::int64_t m, n, k;
  bool b_is_nk;
  int epilogue;
};

struct Blocking {
  int threads;
  std::int64_t block_m, block_n, block_k, micro_m, micro_n;
};

// The tensors of one GEMM: c, bias and scalars may be null (then beta*C and the bias are not read, alpha = 1).
template <typename T>
struct Operands {
  const T* a;
  const T* b;
  const T* c;
  const T* bias;
  const T* scalars;
  T* d;
};

// LayerNorm of A's rows applied while they are packed: A[i, p] becomes
// (A[i, p] - mean[i]) * inv_std[i] * gamma[p] + beta[p], the statistics taken first, per row.
template <typename T>
struct RowNormalisation {
  const T* gamma;
  const T* beta;
  float epsilon;
};

// A function applied to each output after the epilogue (ffn's activation), or null.
using Activation = float (*)(float);

// One prepared variant: buffers allocated once, reused by every timed run.
template <typename T>
class GemmRun {
 public:
  GemmRun(Shape shape, Blocking blocking, MicroKernel micro, ThreadPool& pool, Operands<T> operands,
          std::optional<RowNormalisation<T>> normalisation = std::nullopt, Activation activation = nullptr)
      : s_(shape), b_(blocking), micro_(micro), pool_(pool),
        t_(operands), normalisation_(normalisation), activation_(activation),
        sums_(static_cast<std::size_t>(s_.m * s_.n)),
        packed_b_(static_cast<std::size_t>(round_up(b_.block_n, b_.micro_n) * b_.block_k)),
        packed_a_(static_cast<std::size_t>(round_up(s_.m, b_.micro_m) * b_.block_k)) {
    if (normalisation_) row_stats_.resize(static_cast<std::size_t>(s_.m));
  }

  void operator()() {
    if (normalisation_) {
      for_row_groups([&](std::int64_t begin, std::int64_t end) {
        for (std::int64_t i = begin; i < end; ++i) {
          const T* row = t_.a + i * s_.k;
          row_stats_[static_cast<std::size_t>(i)] = cpu::row_stats_two_pass<8, 2>(
              s_.k, normalisation_->epsilon, [row](std::int64_t p) { return cpu::to_float(row[p]); });
        }
      });
    }
    std::fill(sums_.begin(), sums_.end(), 0.0f);
    for (std::int64_t jc = 0; jc < s_.n; jc += b_.block_n) {
      const std::int64_t nc = std::min(b_.block_n, s_.n - jc);
      for (std::int64_t pc = 0; pc < s_.k; pc += b_.block_k) {
        const std::int64_t kc = std::min(b_.block_k, s_.k - pc);
        const std::int64_t b_panels = (nc + b_.micro_n - 1) / b_.micro_n;
        pool_.parallel_for(b_panels, b_.threads, [&](std::int64_t panel) { pack_b(panel, jc, nc, pc, kc); });
        const std::int64_t m_blocks = (s_.m + b_.block_m - 1) / b_.block_m;
        pool_.parallel_for(m_blocks, b_.threads, [&](std::int64_t block) { multiply(block, jc, nc, pc, kc); });
      }
    }
    for_row_groups([&](std::int64_t begin, std::int64_t end) { finish_rows(begin, end); });
  }

 private:
  static std::int64_t round_up(std::int64_t x, std::int64_t to) { return (x + to - 1) / to * to; }

  // fn(begin, end) over the rows of D in groups of 16, on the pool's threads.
  template <typename Fn>
  void for_row_groups(Fn&& fn) {
    pool_.parallel_for((s_.m + 15) / 16, b_.threads,
                       [&](std::int64_t group) { fn(group * 16, std::min(s_.m, group * 16 + 16)); });
  }

  float a_at(std::int64_t i, std::int64_t p) const {
    const float x = cpu::to_float(t_.a[i * s_.k + p]);
    if (!normalisation_) return x;
    const cpu::RowStats stats = row_stats_[static_cast<std::size_t>(i)];
    return (x - stats.mean) * stats.inv_std * cpu::to_float(normalisation_->gamma[p]) +
           cpu::to_float(normalisation_->beta[p]);
  }

  float b_at(std::int64_t p, std::int64_t j) const {
    return cpu::to_float(s_.b_is_nk ? t_.b[j * s_.k + p] : t_.b[p * s_.n + j]);
  }

  // Panel `panel` of B's block: kc rows of micro_n columns, zero past the last column.
  void pack_b(std::int64_t panel, std::int64_t jc, std::int64_t nc, std::int64_t pc, std::int64_t kc) {
    float* out = packed_b_.data() + panel * b_.micro_n * b_.block_k;
    const std::int64_t j0 = panel * b_.micro_n;
    const std::int64_t cols = std::min(b_.micro_n, nc - j0);
    for (std::int64_t p = 0; p < kc; ++p)
      for (std::int64_t j = 0; j < b_.micro_n; ++j) out[p * b_.micro_n + j] = j < cols ? b_at(pc + p, jc + j0 + j) : 0.0f;
  }

  // Rows [block * block_m, +block_m) of the sums gain A[rows, pc:pc+kc] times the packed B block.
  void multiply(std::int64_t block, std::int64_t jc, std::int64_t nc, std::int64_t pc, std::int64_t kc) {
    const std::int64_t i0 = block * b_.block_m;
    const std::int64_t mc = std::min(b_.block_m, s_.m - i0);
    float* a_block = packed_a_.data() + i0 * b_.block_k;  // this block's own part: no sharing
    for (std::int64_t ir = 0; ir < mc; ir += b_.micro_m) {
      float* out = a_block + ir * b_.block_k;
      const std::int64_t rows = std::min(b_.micro_m, mc - ir);
      for (std::int64_t p = 0; p < kc; ++p)
        for (std::int64_t i = 0; i < b_.micro_m; ++i)
          out[p * b_.micro_m + i] = i < rows ? a_at(i0 + ir + i, pc + p) : 0.0f;
    }
    for (std::int64_t jr = 0; jr < nc; jr += b_.micro_n) {
      const float* b_panel = packed_b_.data() + (jr / b_.micro_n) * b_.micro_n * b_.block_k;
      for (std::int64_t ir = 0; ir < mc; ir += b_.micro_m)
        micro_(kc, a_block + ir * b_.block_k, b_panel, sums_.data() + (i0 + ir) * s_.n + jc + jr, s_.n,
               std::min(b_.micro_m, mc - ir), std::min(b_.micro_n, nc - jr));
    }
  }

  void finish_rows(std::int64_t begin, std::int64_t end) {
    const float alpha = t_.scalars ? cpu::to_float(t_.scalars[0]) : 1.0f, beta = t_.scalars ? cpu::to_float(t_.scalars[1]) : 0.0f;
    for (std::int64_t i = begin; i < end; ++i)
      for (std::int64_t j = 0; j < s_.n; ++j) {
        const float c = t_.c && gemm::reads_c(s_.epilogue) ? cpu::to_float(t_.c[i * s_.n + j]) : 0.0f;
        const float value =
            gemm::apply_epilogue<float>(s_.epilogue, sums_[i * s_.n + j], alpha, beta, c, t_.bias ? cpu::to_float(t_.bias[j]) : 0.0f);
        t_.d[i * s_.n + j] = stored(activation_ ? activation_(value) : value);
      }
  }

  // A tf32 GEMM's inputs are rounded to tf32, its output is a plain float (as on the GPU).
  static T stored(float value) {
    if constexpr (std::is_same_v<T, cpu::tf32>) return T{value};
    else return cpu::from_float<T>(value);
  }

  Shape s_;
  Blocking b_;
  MicroKernel micro_;
  ThreadPool& pool_;
  Operands<T> t_;
  std::optional<RowNormalisation<T>> normalisation_;
  Activation activation_;
  std::vector<cpu::RowStats> row_stats_;
  std::vector<float> sums_, packed_b_, packed_a_;
};

// The config's blocking (threads, block_m/n/k, micro_m/n) and its micro-kernel; UnsupportedConfig
// for values the loop cannot take.
inline Blocking blocking_of(const Config& config, MicroKernel& micro) {
  const Blocking blocking{static_cast<int>(config.get_int("threads")), config.get_int("block_m"),
                          config.get_int("block_n"),                   config.get_int("block_k"),
                          config.get_int("micro_m"),                   config.get_int("micro_n")};
  if (blocking.threads < 1) throw UnsupportedConfig("threads must be at least 1");
  if (blocking.block_m % blocking.micro_m != 0 || blocking.block_n % blocking.micro_n != 0)
    throw UnsupportedConfig("block_m and block_n must be multiples of micro_m and micro_n");
  if (blocking.block_k < 1) throw UnsupportedConfig("block_k must be at least 1");
  micro = cpu::select_variant<MicroKernel>(
      kMicroM, kMicroN, blocking.micro_m, blocking.micro_n, []<int M, int N>() { return &micro_kernel<M, N>; },
      "micro_m", "micro_n");
  return blocking;
}

}  // namespace ktune::cpu_gemm
