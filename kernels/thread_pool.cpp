#include "kernels/thread_pool.hpp"

#include <algorithm>

namespace ktune {

ThreadPool::ThreadPool(int threads) {
  for (int i = 0; i + 1 < std::max(threads, 1); ++i) workers_.emplace_back([this, i] { worker_loop(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (auto& worker : workers_) worker.join();
}

void ThreadPool::drain() {
  for (std::int64_t task = next_task_.fetch_add(1); task < tasks_; task = next_task_.fetch_add(1)) (*body_)(task);
}

void ThreadPool::parallel_for(std::int64_t tasks, int threads,
                              const std::function<void(std::int64_t)>& body) {
  const int helpers = std::clamp(threads, 1, size()) - 1;
  if (helpers == 0 || tasks <= 1) {
    for (std::int64_t task = 0; task < tasks; ++task) body(task);
    return;
  }
  {
    std::lock_guard lock(mutex_);
    body_ = &body;
    tasks_ = tasks;
    next_task_.store(0);
    active_helpers_ = helpers;
    running_helpers_ = helpers;
    ++generation_;
  }
  wake_.notify_all();
  drain();
  std::unique_lock lock(mutex_);
  done_.wait(lock, [this] { return running_helpers_ == 0; });
  body_ = nullptr;
}

void ThreadPool::worker_loop(int index) {
  std::uint64_t seen = 0;
  while (true) {
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || (generation_ != seen && index < active_helpers_); });
      if (stopping_) return;
      seen = generation_;
    }
    drain();
    {
      std::lock_guard lock(mutex_);
      if (--running_helpers_ == 0) done_.notify_one();
    }
  }
}

}  // namespace ktune
