// The float64 statistics of one row that the references of the normalisation and softmax
// families compute (layernorm, residual_layernorm, rmsnorm, rmsnorm_rope, softmax,
// softmax_dropout), each in two plain passes over the row.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace ktune::reference {

// LayerNorm of one row with the biased variance:
// out[c] = (row[c] - mean) / sqrt(var + epsilon) * gamma[c] + beta[c].
inline void layernorm_row(const double* row, const double* gamma, const double* beta, double* out,
                          std::int64_t cols, double epsilon) {
  double total = 0;
  for (std::int64_t c = 0; c < cols; ++c) total += row[c];
  const double mean = total / static_cast<double>(cols);
  double sum_sq = 0;
  for (std::int64_t c = 0; c < cols; ++c) sum_sq += (row[c] - mean) * (row[c] - mean);
  const double inv_std = 1.0 / std::sqrt(sum_sq / static_cast<double>(cols) + epsilon);
  for (std::int64_t c = 0; c < cols; ++c) out[c] = (row[c] - mean) * inv_std * gamma[c] + beta[c];
}

// 1 / sqrt(mean(row^2) + epsilon): RMSNorm's scale of one row.
inline double inverse_rms(const double* row, std::int64_t cols, double epsilon) {
  double sum_sq = 0;
  for (std::int64_t c = 0; c < cols; ++c) sum_sq += row[c] * row[c];
  return 1.0 / std::sqrt(sum_sq / static_cast<double>(cols) + epsilon);
}

// What a stable softmax of one row divides by: out[c] = exp(row[c] - max) / sum.
struct SoftmaxStats {
  double max;
  double sum;
};

inline SoftmaxStats softmax_stats(const double* row, std::int64_t cols) {
  double max = row[0];
  for (std::int64_t c = 1; c < cols; ++c) max = std::max(max, row[c]);
  double sum = 0;
  for (std::int64_t c = 0; c < cols; ++c) sum += std::exp(row[c] - max);
  return {max, sum};
}

}  // namespace ktune::reference
