// The NVRTC build pool behind VariantBuilder for the CUDA backend.
#include <condition_variable>
#include <deque>
#include <future>
#include <map>
#include <mutex>
#include <thread>

#include "tuner/backends/cuda/cuda_backend.hpp"
#include "tuner/backends/cuda/nvrtc_compiler.hpp"
#include "tuner/backends/variant_builder.hpp"

namespace ktune {
namespace {

class NvrtcBuilder final : public VariantBuilder {
 public:
  NvrtcBuilder(const KernelFamily& family, Problem problem, const std::string& arch, int threads, BuildEffort effort)
      : family_(family),
        problem_(std::move(problem)),
        compiler_(arch, NvrtcCompiler::default_cache_dir(), effort == BuildEffort::fast_check) {
    for (int i = 0; i < std::max(threads, 1); ++i) workers_.emplace_back([this] { work(); });
  }

  ~NvrtcBuilder() override {
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
    std::promise<BuiltVariant> promise;
    results_.emplace(id, promise.get_future().share());
    queue_.push_back({config, std::move(promise)});
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

  std::string arch() const override { return compiler_.arch(); }

 private:
  struct Job {
    Config config;
    std::promise<BuiltVariant> promise;
  };

  BuiltVariant build(const Config& config) const {
    BuiltVariant built;
    try {
      const CompiledVariant compiled = compiler_.compile(family_, problem_, config);
      built.ok = compiled.ok;
      built.log = compiled.log;
      built.build.binary = compiled.cubin_path.string();
      built.build.entry = compiled.entry;
      built.build.compile_ms = compiled.compile_ms;
    } catch (const std::exception& e) {
      built.log = e.what();
    }
    return built;
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

  const KernelFamily& family_;
  Problem problem_;
  NvrtcCompiler compiler_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Job> queue_;
  std::map<std::size_t, std::shared_future<BuiltVariant>> results_;
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace

std::unique_ptr<VariantBuilder> make_cuda_variant_builder(const KernelFamily& family, const Problem& problem,
                                                          const std::string& arch, int threads, BuildEffort effort) {
  return std::make_unique<NvrtcBuilder>(family, problem, arch, threads, effort);
}

}  // namespace ktune
