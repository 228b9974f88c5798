// A transformer's MLP block, y = act(x · W1ᵀ + b1) · W2ᵀ + b2, the two GEMMs tuned together.
// Tensors (row-major), in kernel order:
//   x  [m, k]  the tokens (input)
//   w1 [f, k]  the up projection (nn.Linear(k, f).weight)
//   b1 [f]
//   w2 [k, f]  the down projection (nn.Linear(f, k).weight)
//   b2 [k]
//   y  [m, k]  (output)
// activation: 0 GELU (erf, PyTorch's default), 1 GELU with the tanh approximation
// (approximate="tanh"), 2 SiLU. The hidden activation [m, f] is rounded to the problem's
// precision between the GEMMs, as PyTorch's route stores it.
#pragma once

#include <cmath>

#include "kernels/family.hpp"

namespace ktune {

const KernelFamily& ffn_family();
const CpuKernel& ffn_cpu_kernel();

namespace ffn {

enum Activation : int { kGelu = 0, kGeluTanh = 1, kSilu = 2 };
inline constexpr int kActivationCount = 3;

// The activation of one pre-activation value: in double for the reference, in float on the CPU.
template <typename F>
inline F activate(int activation, F x) {
  switch (activation) {
    case kGeluTanh: {
      const F inner = F(0.79788456080286535588) * (x + F(0.044715) * x * x * x);  // sqrt(2/pi)
      return F(0.5) * x * (F(1) + std::tanh(inner));
    }
    case kSilu: return x / (F(1) + std::exp(-x));
    default: return F(0.5) * x * (F(1) + std::erf(x * F(0.70710678118654752440)));
  }
}

}  // namespace ffn
}  // namespace ktune
