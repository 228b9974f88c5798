// Fused gated activations on the CPU (SwiGLU, GeGLU): out[r, c] = act(gate) * up, with gate
// and up the two halves of x [rows, 2*cols]. One implementation serves every such family; a
// family supplies its activation:
//
//   struct Silu {
//     static constexpr const char* parameter = "exp";          // the "libm" / "poly" choice
//     template <bool kPoly> static float apply(float gate);    // act(gate)
//   };
//   static const cpu::GatedActivationCpu<Silu> kernel(source_hash::swiglu_cpu);
//
// Tunables: threads, rows_per_task (cpu_rows.hpp), vector_width and unroll (W lanes x U groups
// per step), and the activation's parameter: "libm" (a libm call per element) or "poly" (a
// branch-free approximation that vectorises across lanes).
#pragma once

#include <string>

#include "kernels/common/cpu_dispatch.hpp"
#include "kernels/common/cpu_numeric.hpp"
#include "kernels/common/cpu_rows.hpp"

namespace ktune::cpu {

template <typename Activation, typename T, bool kPoly, int W, int U>
void gated_row(const T* gate, const T* up, T* out, std::int64_t cols) {
  std::int64_t c = 0;
  for (; c + W * U <= cols; c += W * U)
    for (int u = 0; u < U; ++u)
      for (int lane = 0; lane < W; ++lane) {
        const std::int64_t i = c + u * W + lane;
        out[i] = from_float<T>(Activation::template apply<kPoly>(to_float(gate[i])) * to_float(up[i]));
      }
  for (; c < cols; ++c) out[c] = from_float<T>(Activation::template apply<kPoly>(to_float(gate[c])) * to_float(up[c]));
}

template <typename Activation>
class GatedActivationCpu final : public CpuKernel {
 public:
  explicit GatedActivationCpu(const char* source_hash) : source_hash_(source_hash) {}
  std::string source_hash() const override { return source_hash_; }

  std::function<void()> prepare(const CpuLaunchContext& context) const override {
    const RowLaunch launch = RowLaunch::from(context);
    const bool poly = poly_choice(context.config, Activation::parameter);

    return with_row_storage(context.problem.precision, [&]<typename T>() {
      using RowFn = void (*)(const T*, const T*, T*, std::int64_t);
      const RowFn row_fn =
          select_variant<RowFn>(kVectorWidths, kUnrolls, launch.vector_width, launch.unroll, [poly]<int W, int U>() {
            return poly ? &gated_row<Activation, T, true, W, U> : &gated_row<Activation, T, false, W, U>;
          });
      const T* x = static_cast<const T*>(context.tensor("x").data);
      T* out = static_cast<T*>(context.tensor("out").data);
      return launch_rows(context.pool, launch.rows, launch.schedule, [=](std::int64_t r) {
        row_fn(x + r * 2 * launch.cols, x + r * 2 * launch.cols + launch.cols, out + r * launch.cols, launch.cols);
      });
    });
  }

 private:
  const char* source_hash_;
};

}  // namespace ktune::cpu
