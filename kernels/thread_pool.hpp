// A fixed pool of worker threads for CPU kernels. Threads are created once per worker process,
// so timing a variant measures the kernel, not thread creation.
//
//   ThreadPool pool(std::thread::hardware_concurrency());
//   pool.parallel_for(tasks, threads, [&](std::int64_t task) { ... });
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace ktune {

class ThreadPool {
 public:
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return static_cast<int>(workers_.size()) + 1; }  // the caller takes part

  // Runs body(task) for task in [0, tasks) on `threads` threads (the caller included); tasks are
  // handed out dynamically one at a time. Returns when all tasks are done.
  void parallel_for(std::int64_t tasks, int threads, const std::function<void(std::int64_t)>& body);

 private:
  void worker_loop(int index);
  void drain();

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  std::uint64_t generation_ = 0;
  int active_helpers_ = 0;   // helpers asked to join the current job
  int running_helpers_ = 0;  // helpers still working on it
  bool stopping_ = false;
  const std::function<void(std::int64_t)>* body_ = nullptr;
  std::int64_t tasks_ = 0;
  std::atomic<std::int64_t> next_task_{0};
};

}  // namespace ktune
