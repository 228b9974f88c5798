// GEMM on the CPU, the way BLIS structures it: the n dimension in blocks of block_n, k in blocks
// of block_k (one packed panel of B, kept in cache, shared by all threads), and m in blocks of
// block_m handed to the pool's threads, each packing its rows of A. A micro-kernel keeps a
// micro_m x micro_n tile of sums in vector registers over a k block. Inputs are converted to float
// while packing, so fp16 and bf16 cost no more in the inner loop; sums stay in a float buffer
// across k blocks and the epilogue rounds once to the output precision.
//
// Tunables (search_spaces/gemm.cpu.json): threads, block_m, block_n, block_k, micro_m, micro_n.
#include <algorithm>
#include <memory>
#include <type_traits>
#include <vector>

#include "kernels/common/cpu_dispatch.hpp"
#include "kernels/common/cpu_numeric.hpp"
#include "kernels/cpu_kernel.hpp"
#include "kernels/gemm/gemm.hpp"
#include "kernels/thread_pool.hpp"
#include "ktune/source_hash/gemm_cpu.hpp"

namespace ktune {
namespace {

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

constexpr cpu::IntChoices<4, 6, 8> kMicroM{};
constexpr cpu::IntChoices<8, 16, 32> kMicroN{};

struct Shape {
  std::int64_t m, n, k;
  bool b_is_nk;
  int epilogue;
};

struct Blocking {
  int threads;
  std::int64_t block_m, block_n, block_k, micro_m, micro_n;
};

// One prepared variant: buffers allocated once, reused by every timed run.
template <typename T>
class GemmRun {
 public:
  GemmRun(Shape shape, Blocking blocking, MicroKernel micro, const CpuLaunchContext& context)
      : s_(shape), b_(blocking), micro_(micro), pool_(context.pool),
        a_(static_cast<const T*>(context.tensor("a").data)),
        bm_(static_cast<const T*>(context.tensor("b").data)),
        c_(static_cast<const T*>(context.tensor("c").data)),
        bias_(static_cast<const T*>(context.tensor("bias").data)),
        scalars_(static_cast<const T*>(context.tensor("scalars").data)),
        d_(static_cast<T*>(context.tensor("d").data)),
        sums_(static_cast<std::size_t>(s_.m * s_.n)),
        packed_b_(static_cast<std::size_t>(round_up(b_.block_n, b_.micro_n) * b_.block_k)),
        packed_a_(static_cast<std::size_t>(round_up(s_.m, b_.micro_m) * b_.block_k)) {}

  void operator()() {
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
    const std::int64_t row_tasks = (s_.m + 15) / 16;
    pool_.parallel_for(row_tasks, b_.threads, [&](std::int64_t task) { finish_rows(task * 16, std::min(s_.m, task * 16 + 16)); });
  }

 private:
  static std::int64_t round_up(std::int64_t x, std::int64_t to) { return (x + to - 1) / to * to; }

  float b_at(std::int64_t p, std::int64_t j) const {
    return cpu::to_float(s_.b_is_nk ? bm_[j * s_.k + p] : bm_[p * s_.n + j]);
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
          out[p * b_.micro_m + i] = i < rows ? cpu::to_float(a_[(i0 + ir + i) * s_.k + pc + p]) : 0.0f;
    }
    for (std::int64_t jr = 0; jr < nc; jr += b_.micro_n) {
      const float* b_panel = packed_b_.data() + (jr / b_.micro_n) * b_.micro_n * b_.block_k;
      for (std::int64_t ir = 0; ir < mc; ir += b_.micro_m)
        micro_(kc, a_block + ir * b_.block_k, b_panel, sums_.data() + (i0 + ir) * s_.n + jc + jr, s_.n,
               std::min(b_.micro_m, mc - ir), std::min(b_.micro_n, nc - jr));
    }
  }

  void finish_rows(std::int64_t begin, std::int64_t end) {
    const float alpha = cpu::to_float(scalars_[0]), beta = cpu::to_float(scalars_[1]);
    for (std::int64_t i = begin; i < end; ++i)
      for (std::int64_t j = 0; j < s_.n; ++j) {
        const float c = gemm::reads_c(s_.epilogue) ? cpu::to_float(c_[i * s_.n + j]) : 0.0f;
        d_[i * s_.n + j] = stored(
            gemm::apply_epilogue<float>(s_.epilogue, sums_[i * s_.n + j], alpha, beta, c, cpu::to_float(bias_[j])));
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
  const T* a_;
  const T* bm_;
  const T* c_;
  const T* bias_;
  const T* scalars_;
  T* d_;
  std::vector<float> sums_, packed_b_, packed_a_;
};

class GemmCpu final : public CpuKernel {
 public:
  std::string source_hash() const override { return source_hash::gemm_cpu; }

  std::function<void()> prepare(const CpuLaunchContext& context) const override {
    const Config& config = context.config;
    const Blocking blocking{static_cast<int>(config.get_int("threads")), config.get_int("block_m"),
                            config.get_int("block_n"),                   config.get_int("block_k"),
                            config.get_int("micro_m"),                   config.get_int("micro_n")};
    if (blocking.threads < 1) throw UnsupportedConfig("threads must be at least 1");
    if (blocking.block_m % blocking.micro_m != 0 || blocking.block_n % blocking.micro_n != 0)
      throw UnsupportedConfig("block_m and block_n must be multiples of micro_m and micro_n");
    if (blocking.block_k < 1) throw UnsupportedConfig("block_k must be at least 1");
    const MicroKernel micro = cpu::select_variant<MicroKernel>(
        kMicroM, kMicroN, blocking.micro_m, blocking.micro_n, []<int M, int N>() { return &micro_kernel<M, N>; },
        "micro_m", "micro_n");
    const Problem& problem = context.problem;
    const Shape shape{problem.dim("m"), problem.dim("n"), problem.dim("k"), problem.dim("b_layout") == 0,
                      static_cast<int>(problem.dim("epilogue"))};
    std::function<void()> run;
    const bool typed = cpu::with_any_storage_type(problem.precision, [&]<typename T>() {
      run = [state = std::make_shared<GemmRun<T>>(shape, blocking, micro, context)] {
        (*state)();
      };
    });
    if (!typed) throw UnsupportedConfig("the CPU GEMM takes fp32, tf32, fp16, bf16 or fp8_e4m3");
    return run;
  }
};

}  // namespace

const CpuKernel& gemm_cpu_kernel() {
  static const GemmCpu kernel;
  return kernel;
}

}  // namespace ktune
