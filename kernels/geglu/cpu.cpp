// GeGLU on the CPU: the shared gated-activation kernel (kernels/common/cpu_gated.hpp) with the
// exact GELU, 0.5 * g * (1 + erf(g / sqrt(2))). Its "erf" parameter picks std::erf ("libm") or
// the vectorisable rational erf ("poly", kernels/common/cpu_math.hpp).
#include <cmath>

#include "kernels/common/cpu_gated.hpp"
#include "kernels/common/cpu_math.hpp"
#include "kernels/geglu/geglu.hpp"
#include "ktune/source_hash/geglu_cpu.hpp"

namespace ktune {
namespace {

struct Gelu {
  static constexpr const char* parameter = "erf";
  template <bool kPoly>
  static float apply(float gate) {
    const float z = gate * 0.70710678118654752f;  // g / sqrt(2)
    // libm: 1 + erf(z) as erfc(-z), which keeps its precision where 1 + erf(z) cancels (gates
    // below about -5.7 gave 0 in float); the rational erf vectorises but cancels there.
    return 0.5f * gate * (kPoly ? 1.0f + cpu::erf_poly(z) : std::erfc(-z));
  }
};

}  // namespace

const CpuKernel& geglu_cpu_kernel() {
  static const cpu::GatedActivationCpu<Gelu> kernel(source_hash::geglu_cpu);
  return kernel;
}

}  // namespace ktune
