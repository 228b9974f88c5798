// GEMM: D = epilogue(alpha * A·B, C, bias) with fp32 accumulation.
//
// Tensors, in kernel order:
//   a       [m, k] row-major (input)
//   b       [n, k] when b_layout = 0 (nn.Linear's weight, K-major), [k, n] when b_layout = 1
//   c       [m, n] (input, read only by epilogues 1 and 5; a single element otherwise)
//   bias    [n]    (input, read by epilogues 2-5)
//   scalars [2]    alpha and beta (input, random so that scaling is really checked); for fp8
//                  inputs alpha is the product of A's and B's per-tensor scales
//   d       [m, n] row-major (output)
// Every tensor is in the problem's precision: fp32, tf32 (floats rounded to tf32), fp16, bf16 or
// fp8 e4m3; products are summed in fp32.
// Epilogues: 0 D = alpha·AB; 1 D = alpha·AB + beta·C (accumulate, residual add);
//            2 D = alpha·AB + bias; 3 D = gelu(alpha·AB + bias) (erf form); 4 D = silu(alpha·AB + bias);
//            5 D = alpha·AB + bias + beta·C (a linear layer's output projection with its residual:
//              y = x·Wᵀ + b + r with alpha = beta = 1, in one pass).
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/family.hpp"

namespace ktune {

const KernelFamily& gemm_family();
const CpuKernel& gemm_cpu_kernel();

namespace gemm {

enum Epilogue : int { kPlain = 0, kAccumulate = 1, kBias = 2, kBiasGelu = 3, kBiasSilu = 4, kBiasResidual = 5 };
inline constexpr int kEpilogueCount = 6;

// Whether the epilogue reads C (then [m, n]; else a single unread element).
inline constexpr bool reads_c(int epilogue) { return epilogue == kAccumulate || epilogue == kBiasResidual; }

// The epilogue applied to one accumulated value (acc = A·B for that element): in double for the
// reference, in float in the CPU kernel. GELU is the exact erf form (PyTorch's default).
template <typename F>
inline F apply_epilogue(int epilogue, F acc, F alpha, F beta, F c, F bias) {
  const F x = alpha * acc;
  switch (epilogue) {
    case kAccumulate: return x + beta * c;
    case kBias: return x + bias;
    case kBiasGelu: {
      const F y = x + bias;
      return F(0.5) * y * (F(1) + std::erf(y * F(0.70710678118654752440)));
    }
    case kBiasSilu: {
      const F y = x + bias;
      return y / (F(1) + std::exp(-y));
    }
    case kBiasResidual: return x + bias + beta * c;
    default: return x;
  }
}

// The TMA descriptors of the wgmma path (none for the others): tensors a_tensor [m, k] and
// b_tensor [n, k] (indices into the family's tensors), in boxes of 128 bytes along k (the
// 128-byte swizzle wgmma reads without bank conflicts) by the block's rows; in a cluster each
// block loads (and multicasts) its share of B's rows. gemm's and layernorm_linear's.
std::vector<TensorMapSpec> wgmma_tensor_maps(const Problem& problem, const Config& config, int a_tensor, int b_tensor);

// One operand of the wgmma path, [rows, k] (a tensor index or TensorMapSpec::kWorkspace, from
// byte 0): boxes of 128 bytes along k by box_rows rows, 128-byte swizzled.
TensorMapSpec wgmma_operand_map(int tensor, std::int64_t rows, std::int64_t k, std::int64_t box_rows,
                                Precision precision);

}  // namespace gemm
}  // namespace ktune
