#include "tuner/worker/compile_processes.hpp"

#include <condition_variable>
#include <mutex>

#include "tuner/backends/compile_pool.hpp"
#include "tuner/worker/worker_client.hpp"

namespace ktune {
namespace {

// Seconds one build may take before its process is taken for hung.
constexpr double kCompileTimeoutSeconds = 600;

// The idle compile processes; a compiler thread of the pool takes one for each build.
class CompileProcesses {
 public:
  CompileProcesses(const std::string& backend, int count) {
    for (int i = 0; i < count; ++i) idle_.push_back(std::make_unique<WorkerClient>(backend, 0));
  }
  std::unique_ptr<WorkerClient> take() {
    std::unique_lock lock(mutex_);
    freed_.wait(lock, [this] { return !idle_.empty(); });
    auto client = std::move(idle_.back());
    idle_.pop_back();
    return client;
  }
  void give(std::unique_ptr<WorkerClient> client) {
    {
      std::lock_guard lock(mutex_);
      idle_.push_back(std::move(client));
    }
    freed_.notify_one();
  }

 private:
  std::mutex mutex_;
  std::condition_variable freed_;
  std::vector<std::unique_ptr<WorkerClient>> idle_;
};

}  // namespace

std::unique_ptr<VariantBuilder> make_process_variant_builder(const std::string& backend, const KernelFamily& family,
                                                             const Problem& problem, const std::string& arch,
                                                             int processes, BuildEffort effort,
                                                             const std::vector<std::string>& launch_only) {
  // The in-process builder says whether the backend compiles at all, and refuses what its
  // compiler cannot take before any process starts.
  if (!make_variant_builder(backend, family, problem, arch, 1, effort, launch_only)) return nullptr;
  auto pool = std::make_shared<CompileProcesses>(backend, processes);
  CompileFunction compile = [pool, problem, arch, effort, launch_only](const Config& config) {
    std::unique_ptr<WorkerClient> client = pool->take();
    BuiltVariant built = client->compile(problem, config, arch, effort, launch_only, kCompileTimeoutSeconds);
    pool->give(std::move(client));
    return built;
  };
  return make_compile_pool(std::move(compile), arch, processes, launch_only);
}

std::unique_ptr<VariantBuilder> make_measured_variant_builder(const std::string& backend, const KernelFamily& family,
                                                              const Problem& problem, const std::string& arch,
                                                              int parallel, const std::vector<std::string>& launch_only) {
  if (backend == "cuda" || backend == "hip")
    return make_process_variant_builder(backend, family, problem, arch, parallel, BuildEffort::full, launch_only);
  return make_variant_builder(backend, family, problem, arch, parallel, BuildEffort::full, launch_only);
}

}  // namespace ktune
