// Softmax + dropout on the CPU: softmax's three passes (max, exp and sum, scale) with the
// Philox4x32-10 keep mask applied in the scaling pass. Tunables
// (search_spaces/softmax_dropout.cpu.json):
//   threads, rows_per_task  parallelism and scheduling granularity
//   vector_width, unroll    W lanes x U independent accumulators of the max and the sum; the
//                           scaling pass draws W*U Philox groups (8*W*U elements) per step, one
//                           group per lane, so the generator vectorises across groups
//   exp                     "libm" (std::exp per element) or "poly" (cpu::exp_poly, vectorises)
// The mask is the family's (kernels/softmax_dropout/softmax_dropout.hpp): element i = r * cols + c
// takes 16 bits of Philox group i / 8; a row that does not start on a group boundary handles
// its head and tail elements one group at a time.
#include <algorithm>

#include "kernels/common/cpu_dispatch.hpp"
#include "kernels/common/cpu_numeric.hpp"
#include "kernels/common/cpu_rows.hpp"
#include "kernels/common/philox.hpp"
#include "kernels/softmax/cpu_softmax_row.hpp"
#include "kernels/softmax_dropout/softmax_dropout.hpp"
#include "ktune/source_hash/softmax_dropout_cpu.hpp"

namespace ktune {
namespace {

using cpu::from_float;
using cpu::SoftmaxExp;

constexpr float kDropP = static_cast<float>(kSoftmaxDropoutP);
constexpr float kKeptScale = static_cast<float>(1.0 / (1.0 - kSoftmaxDropoutP));

// Elements [begin, end) of a row whose first element has linear index `base`, one Philox group
// at a time.
template <typename T>
inline void dropout_scale_scalar(const float* e, T* out, std::uint64_t base, std::int64_t begin, std::int64_t end,
                                 float scale, philox::u64 seed, philox::u64 offset) {
  std::uint64_t cached_group = ~std::uint64_t{0};
  philox::U32x4 bits{};
  for (std::int64_t c = begin; c < end; ++c) {
    const std::uint64_t i = base + static_cast<std::uint64_t>(c);
    if (i / 8 != cached_group) {
      cached_group = i / 8;
      bits = philox::group_bits(seed, offset, cached_group);
    }
    out[c] = from_float<T>(philox::keep(philox::element_of_group(bits, static_cast<int>(i % 8)), kDropP) ? e[c] * scale : 0.0f);
  }
}

// `first_index` is the linear index of the row's first element (r * cols); seed and offset the
// call's (the rng tensor).
template <typename T, SoftmaxExp E, int W, int U>
void softmax_dropout_row(const T* x, T* out, std::int64_t cols, std::uint64_t first_index, philox::u64 seed,
                         philox::u64 offset) {
  float* e = cpu::softmax_scratch(out, cols);
  const float scale = kKeptScale / cpu::softmax_exp_sum<T, E, W, U>(x, e, cols);

  // Head: up to the first group boundary.
  const std::int64_t head = std::min<std::int64_t>(cols, static_cast<std::int64_t>((8 - first_index % 8) % 8));
  dropout_scale_scalar(e, out, first_index, 0, head, scale, seed, offset);
  constexpr int G = W * U;  // Philox groups per step
  const philox::U32x2 key = philox::key_of(seed);
  std::int64_t c = head;
  for (; c + 8 * G <= cols; c += 8 * G) {
    const std::uint64_t first_group = (first_index + static_cast<std::uint64_t>(c)) / 8;
    philox::U32x4 groups[G];
    for (int j = 0; j < G; ++j)
      groups[j] = philox::philox4x32_10(philox::counter_of(first_group + j, offset), key);
    // The mask becomes a multiplier first and is applied in a loop of its own: fusing the two
    // (out[i] = keep ? e[i] * scale : 0) is miscompiled by GCC 12.2 at -O3 -march=native
    // (AVX-512) for bf16 storage, dropping kept elements; tests/unit/test_philox.cpp checks the
    // mask of every config element for element.
    float multiplier[8 * G];
    for (int j = 0; j < G; ++j)
      for (int q = 0; q < 8; ++q)
        multiplier[8 * j + q] = philox::keep(philox::element_of_group(groups[j], q), kDropP) ? scale : 0.0f;
    for (int k = 0; k < 8 * G; ++k) out[c + k] = from_float<T>(e[c + k] * multiplier[k]);
  }
  dropout_scale_scalar(e, out, first_index, c, cols, scale, seed, offset);
}

class SoftmaxDropoutCpu final : public CpuKernel {
 public:
  std::string source_hash() const override { return source_hash::softmax_dropout_cpu; }

  std::function<void()> prepare(const CpuLaunchContext& context) const override {
    const cpu::RowLaunch launch = cpu::RowLaunch::from(context);
    const bool poly = cpu::poly_choice(context.config, "exp");

    return cpu::with_row_storage(context.problem.precision, [&]<typename T>() {
      using RowFn = void (*)(const T*, T*, std::int64_t, std::uint64_t, philox::u64, philox::u64);
      const RowFn row_fn = cpu::select_variant<RowFn>(
          cpu::kVectorWidths, cpu::kUnrolls, launch.vector_width, launch.unroll, [poly]<int W, int U>() {
            return poly ? &softmax_dropout_row<T, SoftmaxExp::poly, W, U>
                        : &softmax_dropout_row<T, SoftmaxExp::libm, W, U>;
          });
      const T* x = static_cast<const T*>(context.tensor("x").data);
      const auto* rng = static_cast<const std::int32_t*>(context.tensor("rng").data);
      T* out = static_cast<T*>(context.tensor("out").data);
      return cpu::launch_rows(context.pool, launch.rows, launch.schedule, [=](std::int64_t r) {
        // Read at every launch: a caller may draw a new seed into the same tensor.
        const auto seed = static_cast<philox::u64>(static_cast<std::uint32_t>(rng[0]));
        const auto offset = static_cast<philox::u64>(static_cast<std::uint32_t>(rng[1]));
        row_fn(x + r * launch.cols, out + r * launch.cols, launch.cols, static_cast<std::uint64_t>(r * launch.cols),
               seed, offset);
      });
    });
  }
};

}  // namespace

const CpuKernel& softmax_dropout_cpu_kernel() {
  static const SoftmaxDropoutCpu kernel;
  return kernel;
}

}  // namespace ktune
