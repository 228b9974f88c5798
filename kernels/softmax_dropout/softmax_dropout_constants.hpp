// The dropout constants of softmax_dropout, shared by the host code (the CPU kernel and the
// float64 reference, through softmax_dropout.hpp) and the CUDA kernel (softmax_dropout.cu, via
// NVRTC), so every backend draws the same mask bit for bit. No host includes: NVRTC sees only
// the embedded sources. See softmax_dropout.hpp for what they mean.
#pragma once

#include "kernels/common/philox.hpp"

namespace ktune {

inline constexpr double kSoftmaxDropoutP = 0.1;
inline constexpr philox::u64 kSoftmaxDropoutSeed = 0x5eed;
inline constexpr philox::u64 kSoftmaxDropoutOffset = 0;

}  // namespace ktune
