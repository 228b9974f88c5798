// GeGLU on the CPU. Tunables (search_spaces/geglu.cpu.json):
//   threads, rows_per_task  as for rmsnorm: parallelism and scheduling granularity
//   vector_width, unroll    elements per step (W lanes x U groups) of the elementwise loop
//   erf                     "libm" (std::erf per element) or "poly" (a rational erf that
//                           vectorises across lanes; see kernels/common/cpu_math.hpp)
#include <cmath>

#include "kernels/common/cpu_dispatch.hpp"
#include "kernels/common/cpu_math.hpp"
#include "kernels/common/cpu_numeric.hpp"
#include "kernels/common/cpu_rows.hpp"
#include "kernels/geglu/geglu.hpp"
#include "ktune/source_hash/geglu_cpu.hpp"

namespace ktune {
namespace {

using cpu::from_float;
using cpu::to_float;

enum class ErfKind { libm, poly };

template <ErfKind E>
inline float gelu(float gate) {
  const float z = gate * 0.70710678118654752f;  // g / sqrt(2)
  const float e = E == ErfKind::poly ? cpu::erf_poly(z) : std::erf(z);
  return 0.5f * gate * (1.0f + e);
}

template <typename T, ErfKind E, int W, int U>
void geglu_row(const T* gate, const T* up, T* out, std::int64_t cols) {
  std::int64_t c = 0;
  for (; c + W * U <= cols; c += W * U)
    for (int u = 0; u < U; ++u)
      for (int lane = 0; lane < W; ++lane) {
        const std::int64_t i = c + u * W + lane;
        out[i] = from_float<T>(gelu<E>(to_float(gate[i])) * to_float(up[i]));
      }
  for (; c < cols; ++c) out[c] = from_float<T>(gelu<E>(to_float(gate[c])) * to_float(up[c]));
}

class GeGluCpu final : public CpuKernel {
 public:
  std::string source_hash() const override { return source_hash::geglu_cpu; }

  std::function<void()> prepare(const CpuLaunchContext& context) const override {
    const std::int64_t rows = context.problem.dim("rows");
    const std::int64_t cols = context.problem.dim("cols");
    const cpu::RowSchedule schedule = cpu::RowSchedule::from(context.config);
    const std::int64_t vector_width = context.config.get_int("vector_width");
    const std::int64_t unroll = context.config.get_int("unroll");
    const Value& erf_value = context.config.at("erf");
    const auto* erf_name = std::get_if<std::string>(&erf_value);
    if (!erf_name || (*erf_name != "libm" && *erf_name != "poly"))
      throw UnsupportedConfig("erf must be \"libm\" or \"poly\", got " + to_string(erf_value));
    const bool poly = *erf_name == "poly";

    std::function<void()> launch;
    cpu::with_storage_type(context.problem.precision, [&]<typename T>() {
      using RowFn = void (*)(const T*, const T*, T*, std::int64_t);
      const RowFn row_fn = cpu::select_variant<RowFn>(
          cpu::kVectorWidths, cpu::kUnrolls, vector_width, unroll, [poly]<int W, int U>() {
            return poly ? &geglu_row<T, ErfKind::poly, W, U> : &geglu_row<T, ErfKind::libm, W, U>;
          });
      const T* x = static_cast<const T*>(context.tensors[0].data);
      T* out = static_cast<T*>(context.tensors[1].data);
      launch = cpu::launch_rows(context.pool, rows, schedule, [=](std::int64_t r) {
        row_fn(x + r * 2 * cols, x + r * 2 * cols + cols, out + r * cols, cols);
      });
    });
    if (!launch) throw UnsupportedConfig("no CPU storage for this precision");
    return launch;
  }
};

}  // namespace

const CpuKernel& geglu_cpu_kernel() {
  static const GeGluCpu kernel;
  return kernel;
}

}  // namespace ktune
