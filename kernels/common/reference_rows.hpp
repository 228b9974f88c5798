// Shared by the float64 references of compute-bound families (GEMM, flash attention): which
// output rows to compute, and computing them on the host's threads.
//
// Above kFullReferenceFma multiply-adds a reference computes one row in every group of
// kSampledRowGroup rows (a different row in each group, so every row tile of every variant is
// covered); the rows it leaves out hold NaN and the output check skips them. 8192^3 GEMMs or 16k
// sequences in full would take minutes of host time per problem.
#pragma once

#include <algorithm>
#include <cstdint>
#include <thread>
#include <vector>

namespace ktune::reference {

inline constexpr double kFullReferenceFma = 4294967296.0;
inline constexpr std::int64_t kSampledRowGroup = 64;

// Appends the rows first + [0, count) to `rows`: all of them, or when `sampled` one of each group
// of kSampledRowGroup, row (group * 37 + salt) % group size (`salt` varies the pick between
// matrices that share row numbers).
inline void append_rows(std::vector<std::int64_t>& rows, std::int64_t first, std::int64_t count, bool sampled,
                        std::int64_t salt) {
  for (std::int64_t group = 0; group * kSampledRowGroup < count; ++group) {
    const std::int64_t start = group * kSampledRowGroup;
    const std::int64_t size = std::min(kSampledRowGroup, count - start);
    if (sampled)
      rows.push_back(first + start + (group * 37 + salt) % size);
    else
      for (std::int64_t i = start; i < start + size; ++i) rows.push_back(first + i);
  }
}

// Calls row_fn(row, scratch) for every row, spread over the host's threads; each thread owns a
// vector of `scratch_size` doubles.
template <typename RowFn>
void for_each_row(const std::vector<std::int64_t>& rows, std::size_t scratch_size, RowFn&& row_fn) {
  const auto workers = static_cast<std::int64_t>(std::max(1u, std::thread::hardware_concurrency()));
  const auto count = static_cast<std::int64_t>(rows.size());
  auto run = [&](std::int64_t w) {
    std::vector<double> scratch(scratch_size);
    for (std::int64_t i = w; i < count; i += workers) row_fn(rows[static_cast<std::size_t>(i)], scratch);
  };
  std::vector<std::jthread> threads;
  for (std::int64_t w = 1; w < std::min(workers, count); ++w) threads.emplace_back(run, w);
  run(0);
}

}  // namespace ktune::reference
