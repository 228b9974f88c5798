// Copy on the CPU: memcpy of chunks handed to the pool's threads. The tunables are how many
// threads take part and how large a chunk is (small chunks balance load, large ones cost less
// scheduling).
#include <algorithm>
#include <cstring>

#include "kernels/copy/copy.hpp"
#include "kernels/cpu_kernel.hpp"
#include "kernels/thread_pool.hpp"
#include "ktune/source_hash/copy_cpu.hpp"

namespace ktune {
namespace {

class CopyCpu final : public CpuKernel {
 public:
  std::string source_hash() const override { return source_hash::copy_cpu; }

  std::function<void()> prepare(const CpuLaunchContext& context) const override {
    const int threads = static_cast<int>(context.config.get_int("threads"));
    const std::int64_t chunk_kib = context.config.get_int("chunk_kib");
    if (threads < 1) throw UnsupportedConfig("threads must be at least 1");
    if (chunk_kib < 1) throw UnsupportedConfig("chunk_kib must be at least 1");
    const std::int64_t bytes = context.problem.dim("n") * element_bytes(context.problem.precision);
    const std::int64_t chunk = chunk_kib * 1024;
    const std::int64_t tasks = (bytes + chunk - 1) / chunk;
    const auto* source = static_cast<const char*>(context.tensor("x").data);
    auto* destination = static_cast<char*>(context.tensor("out").data);
    ThreadPool& pool = context.pool;
    return [=, &pool] {
      pool.parallel_for(tasks, threads, [=](std::int64_t task) {
        const std::int64_t begin = task * chunk;
        std::memcpy(destination + begin, source + begin, static_cast<std::size_t>(std::min(chunk, bytes - begin)));
      });
    };
  }
};

}  // namespace

const CpuKernel& copy_cpu_kernel() {
  static const CopyCpu kernel;
  return kernel;
}

}  // namespace ktune
