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
    return 0.5f * gate * (1.0f + (kPoly ? cpu::erf_poly(z) : std::erf(z)));
  }
};

}  // namespace

const CpuKernel& geglu_cpu_kernel() {
  static const cpu::GatedActivationCpu<Gelu> kernel(source_hash::geglu_cpu);
  return kernel;
}

}  // namespace ktune
