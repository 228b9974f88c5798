// The dropout probability of softmax_dropout, shared by the host code (the CPU kernel and the
// float64 reference, through softmax_dropout.hpp) and the CUDA kernel (softmax_dropout.cu, via
// NVRTC), so every backend keeps elements at the same threshold; the seed and offset come with each call
// (the rng tensor, softmax_dropout.hpp). No host includes: NVRTC sees only
// the embedded sources. See softmax_dropout.hpp for what they mean.
#pragma once

#include "kernels/common/philox.hpp"

namespace ktune {

inline constexpr double kSoftmaxDropoutP = 0.1;

}  // namespace ktune
