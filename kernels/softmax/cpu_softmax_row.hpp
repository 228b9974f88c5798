// The first two passes of a CPU softmax row, shared by softmax and softmax_dropout: the row
// maximum, then e[c] = exp(x[c] - max) into a float row and their sum. W lanes x U independent
// accumulators, so both reductions vectorise without reassociating one running value. The exp is
// a tunable choice: std::exp per element ("libm") or cpu::exp_poly ("poly", vectorises).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "kernels/common/cpu_math.hpp"
#include "kernels/common/cpu_numeric.hpp"

namespace ktune::cpu {

enum class SoftmaxExp { libm, poly };

template <SoftmaxExp E>
inline float softmax_exp(float x) {
  if constexpr (E == SoftmaxExp::poly)
    return exp_poly(x);
  else
    return std::exp(x);
}

// Where the exps of a row are kept between the sum and the final scaling: the output row itself
// when it is float, otherwise a float row per thread (so fp16/bf16 round only once, at the end).
template <typename T>
inline float* softmax_scratch([[maybe_unused]] T* out, std::int64_t cols) {
  if constexpr (std::is_same_v<T, float>) {
    return out;
  } else {
    thread_local std::vector<float> buffer;
    if (buffer.size() < static_cast<std::size_t>(cols)) buffer.resize(static_cast<std::size_t>(cols));
    return buffer.data();
  }
}

// Writes e[c] = exp(x[c] - max_c x) and returns sum_c e[c].
template <typename T, SoftmaxExp E, int W, int U>
inline float softmax_exp_sum(const T* x, float* e, std::int64_t cols) {
  float lane_max[U][W];
  for (int u = 0; u < U; ++u)
    for (int lane = 0; lane < W; ++lane) lane_max[u][lane] = -std::numeric_limits<float>::infinity();
  std::int64_t c = 0;
  for (; c + W * U <= cols; c += W * U)
    for (int u = 0; u < U; ++u)
      for (int lane = 0; lane < W; ++lane) {
        const float v = to_float(x[c + u * W + lane]);
        lane_max[u][lane] = v > lane_max[u][lane] ? v : lane_max[u][lane];
      }
  float max = -std::numeric_limits<float>::infinity();
  for (int u = 0; u < U; ++u)
    for (int lane = 0; lane < W; ++lane) max = lane_max[u][lane] > max ? lane_max[u][lane] : max;
  for (; c < cols; ++c) max = to_float(x[c]) > max ? to_float(x[c]) : max;

  float partial[U][W] = {};
  c = 0;
  for (; c + W * U <= cols; c += W * U)
    for (int u = 0; u < U; ++u)
      for (int lane = 0; lane < W; ++lane) {
        const std::int64_t i = c + u * W + lane;
        e[i] = softmax_exp<E>(to_float(x[i]) - max);
        partial[u][lane] += e[i];
      }
  float sum = 0;
  for (int u = 0; u < U; ++u)
    for (int lane = 0; lane < W; ++lane) sum += partial[u][lane];
  for (; c < cols; ++c) {
    e[c] = softmax_exp<E>(to_float(x[c]) - max);
    sum += e[c];
  }
  return sum;
}

}  // namespace ktune::cpu
