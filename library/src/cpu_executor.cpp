// The CPU backend of the library: host memory, and the families' CPU kernels (kernels/<family>/
// cpu.cpp) run on a thread pool owned by the executor.
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "kernels/cpu_kernel.hpp"
#include "kernels/thread_pool.hpp"
#include "library/src/executor.hpp"
#include "tuner/backends/cpu/cpu_device.hpp"

namespace ktune::library {
namespace {

class CpuExecutor final : public Executor {
 public:
  CpuExecutor() : device_(describe_host_cpu()), pool_(static_cast<int>(std::max(1u, std::thread::hardware_concurrency()))) {}

  const DeviceInfo& device() const override { return device_; }
  bool runs(const KernelFamily& family) const override { return family.cpu_kernel() != nullptr; }

  void* allocate(std::size_t bytes) override {
    // 64-byte alignment: the kernels' vector loads want at least the widest vector's alignment.
    void* memory = std::aligned_alloc(64, (std::max<std::size_t>(bytes, 1) + 63) / 64 * 64);
    if (!memory) throw std::bad_alloc();
    return memory;
  }
  void release(void* memory) override { std::free(memory); }
  void copy_to_device(void* device, const void* host, std::size_t bytes) override { std::memcpy(device, host, bytes); }
  void copy_to_host(void* host, const void* device, std::size_t bytes) override { std::memcpy(host, device, bytes); }
  void synchronize() override {}

  PreparedLaunch prepare(const KernelFamily& family, const Problem& problem, const Config& config,
                         const SearchSpace&) override {
    const CpuKernel* kernel = family.cpu_kernel();
    if (!kernel) throw ConfigCannotRun(family.name() + " has no CPU implementation");
    const auto specs = family.tensors(problem);
    auto names = std::make_shared<std::vector<std::string>>(family.tensor_names(problem));
    auto elements = std::make_shared<std::vector<std::int64_t>>();
    for (const auto& spec : specs) elements->push_back(spec.elements);
    // prepare() resolves the config (UnsupportedConfig for a value the kernel lacks): try it once
    // now so an unusable config is found before the call. It reads no data tensor, but it may
    // read a scalar one (attention's scale): small tensors get zeroed stand-ins, large ones null.
    constexpr std::int64_t kLargestReadAtPrepare = 4096;
    std::vector<std::vector<std::max_align_t>> stand_ins;
    std::vector<CpuTensor> probe;
    for (std::size_t t = 0; t < specs.size(); ++t) {
      void* data = nullptr;
      if ((*elements)[t] <= kLargestReadAtPrepare) {
        const auto bytes = static_cast<std::size_t>(specs[t].bytes(problem));
        stand_ins.emplace_back(bytes / sizeof(std::max_align_t) + 1);
        data = stand_ins.back().data();
      }
      probe.push_back({data, (*elements)[t]});
    }
    try {
      std::lock_guard lock(pool_mutex_);
      kernel->prepare({problem, config, probe, *names, pool_});
    } catch (const UnsupportedConfig& e) {
      throw ConfigCannotRun(e.what());
    }
    return [this, kernel, problem, config, names, elements](std::span<void* const> tensors, void*) {
      std::vector<CpuTensor> bound;
      for (std::size_t t = 0; t < tensors.size(); ++t) bound.push_back({tensors[t], (*elements)[t]});
      // One call at a time uses the pool: threads sharing a context take turns.
      std::lock_guard lock(pool_mutex_);
      kernel->prepare({problem, config, bound, *names, pool_})();
    };
  }

 private:
  DeviceInfo device_;
  ThreadPool pool_;
  std::mutex pool_mutex_;
};

}  // namespace

std::unique_ptr<Executor> make_cpu_executor() { return std::make_unique<CpuExecutor>(); }

}  // namespace ktune::library
