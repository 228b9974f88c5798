// Mean and inverse standard deviation of one row, for the CPU kernels that normalise rows
// (layernorm, residual_layernorm, instance_norm, and layernorm_linear through gemm's loop). Float
// accumulation in W lanes x U independent accumulators, so the loops vectorise without
// reassociating a single running sum. Two algorithms, a tunable choice:
//   two_pass  sum -> mean, then sum of (v - mean)^2 (reads the row twice)
//   welford   one pass: each of the W*U lanes runs Welford's update over its strided elements
//             (all lanes see the same count, so 1/count is one scalar per step); the lanes are
//             merged exactly (equal counts: mean of means, M2 = sum M2 + n * sum (mean_l - mean)^2)
//             and the tail elements are folded in with Welford's update.
// Both read the row through an element loader, `load(c)` -> float (a plain load and convert for
// layernorm, x + residual for residual_layernorm), called once per element and pass.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <variant>

#include "kernels/cpu_kernel.hpp"

namespace ktune::cpu {

enum class RowStatsKind { two_pass, welford };

// The config's "stats" parameter; UnsupportedConfig unless it is "two_pass" or "welford".
inline RowStatsKind row_stats_kind(const Config& config) {
  const Value& value = config.at("stats");
  const auto* name = std::get_if<std::string>(&value);
  if (name && *name == "two_pass") return RowStatsKind::two_pass;
  if (name && *name == "welford") return RowStatsKind::welford;
  throw UnsupportedConfig("stats must be \"two_pass\" or \"welford\", got " + to_string(value));
}

struct RowStats {
  float mean;
  float inv_std;
};

template <int W, int U, typename Load>
inline RowStats row_stats_two_pass(std::int64_t cols, float epsilon, Load load) {
  float partial[U][W] = {};
  std::int64_t c = 0;
  for (; c + W * U <= cols; c += W * U)
    for (int u = 0; u < U; ++u)
      for (int lane = 0; lane < W; ++lane) partial[u][lane] += load(c + u * W + lane);
  float sum = 0;
  for (int u = 0; u < U; ++u)
    for (int lane = 0; lane < W; ++lane) sum += partial[u][lane];
  for (; c < cols; ++c) sum += load(c);
  const float mean = sum / static_cast<float>(cols);

  float squares[U][W] = {};
  c = 0;
  for (; c + W * U <= cols; c += W * U)
    for (int u = 0; u < U; ++u)
      for (int lane = 0; lane < W; ++lane) {
        const float d = load(c + u * W + lane) - mean;
        squares[u][lane] += d * d;
      }
  float sum_sq = 0;
  for (int u = 0; u < U; ++u)
    for (int lane = 0; lane < W; ++lane) sum_sq += squares[u][lane];
  for (; c < cols; ++c) {
    const float d = load(c) - mean;
    sum_sq += d * d;
  }
  return {mean, 1.0f / std::sqrt(sum_sq / static_cast<float>(cols) + epsilon)};
}

template <int W, int U, typename Load>
inline RowStats row_stats_welford(std::int64_t cols, float epsilon, Load load) {
  float lane_mean[U][W] = {};
  float lane_m2[U][W] = {};
  std::int64_t steps = 0;
  std::int64_t c = 0;
  for (; c + W * U <= cols; c += W * U) {
    ++steps;
    const float inv_count = 1.0f / static_cast<float>(steps);
    for (int u = 0; u < U; ++u)
      for (int lane = 0; lane < W; ++lane) {
        const float v = load(c + u * W + lane);
        const float d = v - lane_mean[u][lane];
        lane_mean[u][lane] += d * inv_count;
        lane_m2[u][lane] += d * (v - lane_mean[u][lane]);
      }
  }
  // Merge the lanes (each holds `steps` elements).
  float mean = 0, m2 = 0, count = 0;
  if (steps > 0) {
    for (int u = 0; u < U; ++u)
      for (int lane = 0; lane < W; ++lane) mean += lane_mean[u][lane];
    mean /= static_cast<float>(W * U);
    float spread = 0;
    for (int u = 0; u < U; ++u)
      for (int lane = 0; lane < W; ++lane) {
        const float d = lane_mean[u][lane] - mean;
        m2 += lane_m2[u][lane];
        spread += d * d;
      }
    m2 += static_cast<float>(steps) * spread;
    count = static_cast<float>(steps * W * U);
  }
  for (; c < cols; ++c) {
    const float v = load(c);
    count += 1.0f;
    const float d = v - mean;
    mean += d / count;
    m2 += d * (v - mean);
  }
  return {mean, 1.0f / std::sqrt(m2 / static_cast<float>(cols) + epsilon)};
}

template <RowStatsKind K, int W, int U, typename Load>
inline RowStats row_stats(std::int64_t cols, float epsilon, Load load) {
  if constexpr (K == RowStatsKind::two_pass)
    return row_stats_two_pass<W, U>(cols, epsilon, load);
  else
    return row_stats_welford<W, U>(cols, epsilon, load);
}

}  // namespace ktune::cpu
