// Row-parallel scheduling shared by the CPU families whose work splits into independent rows:
// the `threads` and `rows_per_task` parameters, read once, and the launch that hands rows to
// the pool in tasks of `rows_per_task`.
//
//   const RowSchedule schedule = RowSchedule::from(context.config);  // or RowLaunch::from(context)
//   return launch_rows(context.pool, rows, schedule, [=](std::int64_t r) { row_fn(...r...); });
//
// with_row_storage picks the element type those launches are built for.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>

#include "kernels/common/cpu_numeric.hpp"
#include "kernels/cpu_kernel.hpp"
#include "kernels/thread_pool.hpp"

namespace ktune::cpu {

struct RowSchedule {
  int threads;
  std::int64_t rows_per_task;

  // `per_task`: the parameter that gives the rows handed out at a time (instance_norm calls its
  // rows planes: planes_per_task).
  static RowSchedule from(const Config& config, const std::string& per_task = "rows_per_task") {
    const RowSchedule schedule{static_cast<int>(config.get_int("threads")), config.get_int(per_task)};
    if (schedule.threads < 1) throw UnsupportedConfig("threads must be at least 1");
    if (schedule.rows_per_task < 1) throw UnsupportedConfig(per_task + " must be at least 1");
    return schedule;
  }
};

// What every kernel over the rows of a [rows, cols] problem reads before it launches: the dims,
// the schedule, and the vector_width and unroll that pick its row function (select_variant).
struct RowLaunch {
  std::int64_t rows;
  std::int64_t cols;
  RowSchedule schedule;
  std::int64_t vector_width;
  std::int64_t unroll;

  static RowLaunch from(const CpuLaunchContext& context) {
    return {context.problem.dim("rows"), context.problem.dim("cols"), RowSchedule::from(context.config),
            context.config.get_int("vector_width"), context.config.get_int("unroll")};
  }
};

template <typename RowBody>
std::function<void()> launch_rows(ThreadPool& pool, std::int64_t rows, RowSchedule schedule, RowBody body) {
  const std::int64_t tasks = (rows + schedule.rows_per_task - 1) / schedule.rows_per_task;
  return [&pool, rows, schedule, tasks, body] {
    pool.parallel_for(tasks, schedule.threads, [&](std::int64_t task) {
      const std::int64_t end = std::min(rows, (task + 1) * schedule.rows_per_task);
      for (std::int64_t r = task * schedule.rows_per_task; r < end; ++r) body(r);
    });
  };
}

// The launch that make<T>() builds for T, the storage type of `precision` (float, fp16 or bf16);
// UnsupportedConfig when the CPU stores that precision in none of them.
template <typename Make>
std::function<void()> with_row_storage(Precision precision, Make make) {
  std::function<void()> launch;
  with_storage_type(precision, [&]<typename T>() { launch = make.template operator()<T>(); });
  if (!launch) throw UnsupportedConfig("no CPU storage for this precision");
  return launch;
}

}  // namespace ktune::cpu
