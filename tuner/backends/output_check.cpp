#include "tuner/backends/output_check.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <thread>

#include "kernels/common/cpu_numeric.hpp"

namespace ktune {
namespace {

struct L2Sums {
  double diff_sq = 0;
  double ref_sq = 0;
  bool finite = true;
};

// Sums over elements [begin, end) of one output.
template <typename T>
L2Sums sums_of(const T* got, std::span<const double> expected, std::size_t begin, std::size_t end) {
  L2Sums sums;
  for (std::size_t i = begin; i < end; ++i) {
    if (std::isnan(expected[i])) continue;  // the reference left this element unchecked
    const double value = cpu::to_double(got[i]);
    if (std::isinf(expected[i])) {  // attention's lse of a row that sees no key: only the same infinity passes
      if (value == expected[i]) continue;
      sums.finite = false;
      return sums;
    }
    if (!std::isfinite(value)) {
      sums.finite = false;
      return sums;
    }
    const double d = value - expected[i];
    sums.diff_sq += d * d;
    sums.ref_sq += expected[i] * expected[i];
  }
  return sums;
}

}  // namespace

double stored_outputs_error(const std::vector<StoredOutput>& outputs) {
  constexpr std::size_t kChunk = 1 << 20;  // below this, threads cost more than they save
  double worst = 0;
  for (const StoredOutput& output : outputs) {
    const std::size_t n = output.expected.size();
    const std::size_t workers =
        std::clamp<std::size_t>(n / kChunk, 1, std::max(1u, std::thread::hardware_concurrency()));
    std::vector<L2Sums> parts(workers);
    cpu::with_every_storage_type(output.precision, [&]<typename T>() {
      const T* got = static_cast<const T*>(output.data);
      auto run = [&](std::size_t w) { parts[w] = sums_of(got, output.expected, n * w / workers, n * (w + 1) / workers); };
      std::vector<std::jthread> threads;
      for (std::size_t w = 1; w < workers; ++w) threads.emplace_back(run, w);
      run(0);
    });
    // Summed in worker order, so the result does not depend on thread timing.
    L2Sums total;
    for (const L2Sums& part : parts) {
      total.finite = total.finite && part.finite;
      total.diff_sq += part.diff_sq;
      total.ref_sq += part.ref_sq;
    }
    if (!total.finite) return NAN;
    worst = std::max(worst, total.ref_sq > 0 ? std::sqrt(total.diff_sq / total.ref_sq) : std::sqrt(total.diff_sq));
  }
  return worst;
}

double stored_outputs_closeness(const std::vector<StoredOutput>& outputs, double atol, double rtol) {
  constexpr std::size_t kChunk = 1 << 20;  // split over the host's cores as stored_outputs_error is
  double worst = 0;
  for (const StoredOutput& output : outputs) {
    const std::size_t n = output.expected.size();
    const std::size_t workers =
        std::clamp<std::size_t>(n / kChunk, 1, std::max(1u, std::thread::hardware_concurrency()));
    std::vector<double> parts(workers, 0.0);  // each part's worst ratio; NaN for a non-finite value
    cpu::with_every_storage_type(output.precision, [&]<typename T>() {
      const T* got = static_cast<const T*>(output.data);
      auto run = [&](std::size_t w) {
        double part = 0;
        for (std::size_t i = n * w / workers, end = n * (w + 1) / workers; i < end; ++i) {
          const double expected = output.expected[i];
          if (std::isnan(expected)) continue;  // unchecked element
          const double value = cpu::to_double(got[i]);
          if (value == expected) continue;     // also the same infinity
          if (!std::isfinite(value) || std::isinf(expected)) {
            part = NAN;
            break;
          }
          const double allowed = atol + rtol * std::fabs(expected);
          const double difference = std::fabs(value - expected);
          part = std::max(part, allowed > 0 ? difference / allowed : INFINITY);
        }
        parts[w] = part;
      };
      std::vector<std::jthread> threads;
      for (std::size_t w = 1; w < workers; ++w) threads.emplace_back(run, w);
      run(0);
    });
    for (double part : parts) {
      if (std::isnan(part)) return NAN;
      worst = std::max(worst, part);
    }
  }
  return worst;
}

OutputCheck judge_closeness(double error, const KernelFamily::Closeness& close) {
  char text[160];
  std::snprintf(text, sizeof text, "largest |got - expected| / (atol + rtol |expected|) = %.3g (atol %.1e, rtol %.1e)",
                error, close.atol, close.rtol);
  return {error, Verdict{error <= 1.0, std::isnan(error) ? "an output holds NaN or infinity where the reference does not"
                                                             : std::string(text)}};
}

OutputCheck check_outputs(const KernelFamily& family, const Problem& problem, const std::vector<StoredOutput>& outputs) {
  if (const auto close = family.closeness())
    return judge_closeness(stored_outputs_closeness(outputs, close->atol, close->rtol), *close);
  const double error = stored_outputs_error(outputs);
  return {error, judge_error(error, family.tolerance(problem.precision))};
}

}  // namespace ktune
