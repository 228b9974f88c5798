// split_heads on the CPU, one token (row of qkv) at a time: each of its head vectors is copied
// to its heads-first place, the queries' and keys' rotated on the way (RoPE pairs i and i + half
// take W x U pairs per step). Tunables (search_spaces/split_heads.cpu.json):
//   threads, rows_per_task  parallelism and scheduling granularity over tokens
//   vector_width, unroll    float lanes per rotation step (W) and independent groups of them (U)
#include <cstring>

#include "kernels/common/cpu_dispatch.hpp"
#include "kernels/common/cpu_numeric.hpp"
#include "kernels/common/cpu_rows.hpp"
#include "kernels/split_heads/split_heads.hpp"
#include "ktune/source_hash/split_heads_cpu.hpp"

namespace ktune {
namespace {

using cpu::from_float;
using cpu::to_float;

template <typename T>
inline void rotate_pair(const T* __restrict x, const T* __restrict cos, const T* __restrict sin, T* __restrict out,
                        std::int64_t i, std::int64_t half) {
  const float a = to_float(x[i]), b = to_float(x[i + half]);
  const float c = to_float(cos[i]), s = to_float(sin[i]);
  out[i] = from_float<T>(a * c - b * s);
  out[i + half] = from_float<T>(b * c + a * s);
}

template <typename T, int W, int U>
void rotate_head(const T* __restrict x, const T* __restrict cos, const T* __restrict sin, T* __restrict out,
                 std::int64_t half) {
  std::int64_t i = 0;
  for (; i + W * U <= half; i += W * U)
    for (int u = 0; u < U; ++u)
      for (int lane = 0; lane < W; ++lane) rotate_pair(x, cos, sin, out, i + u * W + lane, half);
  for (; i < half; ++i) rotate_pair(x, cos, sin, out, i, half);
}

class SplitHeadsCpu final : public CpuKernel {
 public:
  std::string source_hash() const override { return source_hash::split_heads_cpu; }

  std::function<void()> prepare(const CpuLaunchContext& context) const override {
    const split_heads::Shape shape = split_heads::shape_of(context.problem);
    const cpu::RowSchedule schedule = cpu::RowSchedule::from(context.config);
    const std::int64_t vector_width = context.config.get_int("vector_width");
    const std::int64_t unroll = context.config.get_int("unroll");
    return cpu::with_row_storage(context.problem.precision, [&]<typename T>() {
      using RotateFn = void (*)(const T*, const T*, const T*, T*, std::int64_t);
      const RotateFn rotate = cpu::select_variant<RotateFn>(cpu::kVectorWidths, cpu::kUnrolls, vector_width, unroll,
                                                            []<int W, int U>() { return &rotate_head<T, W, U>; });
      const T* qkv = static_cast<const T*>(context.tensor("qkv").data);
      const T* cos = static_cast<const T*>(context.tensor("cos").data);
      const T* sin = static_cast<const T*>(context.tensor("sin").data);
      T* outputs[] = {static_cast<T*>(context.tensor("q").data), static_cast<T*>(context.tensor("k").data),
                      static_cast<T*>(context.tensor("v").data)};
      return cpu::launch_rows(context.pool, shape.batch * shape.seq, schedule, [=](std::int64_t row) {
        const std::int64_t b = row / shape.seq, s = row % shape.seq, half = shape.half();
        const T* x = qkv + row * shape.slots() * shape.head_dim;
        for (std::int64_t slot = 0; slot < shape.slots(); ++slot, x += shape.head_dim) {
          const auto [tensor, offset] = shape.destination(b, s, slot);
          if (shape.rope && tensor != 2)
            rotate(x, cos + s * half, sin + s * half, outputs[tensor] + offset, half);
          else
            std::memcpy(outputs[tensor] + offset, x, static_cast<std::size_t>(shape.head_dim) * sizeof(T));
        }
      });
    });
  }
};

}  // namespace

const CpuKernel& split_heads_cpu_kernel() {
  static const SplitHeadsCpu kernel;
  return kernel;
}

}  // namespace ktune
