// SwiGLU on the CPU: the shared gated-activation kernel (kernels/common/cpu_gated.hpp) with
// silu(g) = g / (1 + e^-g). Its "exp" parameter picks std::exp ("libm") or the vectorisable
// polynomial exp ("poly", kernels/common/cpu_math.hpp).
#include <cmath>

#include "kernels/common/cpu_gated.hpp"
#include "kernels/common/cpu_math.hpp"
#include "kernels/swiglu/swiglu.hpp"
#include "ktune/source_hash/swiglu_cpu.hpp"

namespace ktune {
namespace {

struct Silu {
  static constexpr const char* parameter = "exp";
  template <bool kPoly>
  static float apply(float gate) {
    const float e = kPoly ? cpu::exp_poly(-gate) : std::exp(-gate);
    return gate / (1.0f + e);
  }
};

}  // namespace

const CpuKernel& swiglu_cpu_kernel() {
  static const cpu::GatedActivationCpu<Silu> kernel(source_hash::swiglu_cpu);
  return kernel;
}

}  // namespace ktune
