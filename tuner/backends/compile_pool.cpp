#include "tuner/backends/compile_pool.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <future>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

namespace ktune {
namespace {

class CompilePool final : public VariantBuilder {
 public:
  CompilePool(CompileFunction compile, std::string arch, int threads, std::vector<std::string> launch_only)
      : compile_(std::move(compile)), arch_(std::move(arch)), launch_only_(std::move(launch_only)) {
    for (int i = 0; i < std::max(threads, 1); ++i) workers_.emplace_back([this] { work(); });
  }

  ~CompilePool() override {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    for (auto& worker : workers_) worker.join();
  }

  void prefetch(std::size_t id, const Config& config) override {
    std::lock_guard lock(mutex_);
    if (results_.count(id)) return;
    const Config code = code_config(config);
    const std::string key = code.key();
    if (const auto same = builds_.find(key); same != builds_.end()) {
      results_.emplace(id, same->second);  // the same code as a config already built or queued
      return;
    }
    std::promise<BuiltVariant> promise;
    auto future = promise.get_future().share();
    results_.emplace(id, future);
    builds_.emplace(key, future);
    queue_.push_back({code, std::move(promise)});
    wake_.notify_one();
  }

  BuiltVariant get(std::size_t id, const Config& config) override {
    prefetch(id, config);
    std::shared_future<BuiltVariant> result;
    {
      std::lock_guard lock(mutex_);
      result = results_.at(id);
    }
    BuiltVariant built = result.get();
    std::lock_guard lock(mutex_);
    results_.erase(id);
    return built;
  }

  bool ready(std::size_t id) const override {
    std::lock_guard lock(mutex_);
    const auto found = results_.find(id);
    return found != results_.end() && found->second.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
  }

  std::string arch() const override { return arch_; }

  // The config as the compiler sees it: without the parameters only the launch reads.
  Config code_config(const Config& config) const {
    Config code = config;
    std::erase_if(code.values, [this](const auto& entry) {
      return std::find(launch_only_.begin(), launch_only_.end(), entry.first) != launch_only_.end();
    });
    return code;
  }

 private:
  struct Job {
    Config config;
    std::promise<BuiltVariant> promise;
  };

  BuiltVariant build(const Config& config) const {
    try {
      return compile_(config);
    } catch (const std::exception& e) {
      BuiltVariant failed;
      failed.log = e.what();
      return failed;
    }
  }

  void work() {
    while (true) {
      Job job;
      {
        std::unique_lock lock(mutex_);
        wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
        if (stopping_) return;  // builds nobody asked for yet are dropped
        job = std::move(queue_.front());
        queue_.pop_front();
      }
      job.promise.set_value(build(job.config));
    }
  }

  CompileFunction compile_;
  std::string arch_;
  std::vector<std::string> launch_only_;
  // Every build by its code config's key, so configs with the same code share it. Builds are
  // small (a path, a log), so they are kept for the whole tune.
  std::map<std::string, std::shared_future<BuiltVariant>> builds_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Job> queue_;
  std::map<std::size_t, std::shared_future<BuiltVariant>> results_;
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace

std::unique_ptr<VariantBuilder> make_compile_pool(CompileFunction compile, std::string arch, int threads,
                                                  std::vector<std::string> launch_only) {
  return std::make_unique<CompilePool>(std::move(compile), std::move(arch), threads, std::move(launch_only));
}

}  // namespace ktune
