#include "kernels/testing/fault_injection.hpp"

#include <csignal>
#include <cstdlib>
#include <chrono>
#include <limits>
#include <memory>
#include <thread>

#include "kernels/common/cpu_numeric.hpp"
#include "kernels/cpu_kernel.hpp"

namespace ktune {
namespace {

class FaultInjectionCpu final : public CpuKernel {
 public:
  std::string source_hash() const override { return "fault-injection-v1"; }

  std::function<void()> prepare(const CpuLaunchContext& context) const override {
    if (context.problem.precision != Precision::fp32) throw UnsupportedConfig("fault_injection is fp32 only");
    const std::int64_t n = context.problem.dim("n");
    const std::int64_t work = context.config.get_int("work");
    const std::string behaviour = std::get<std::string>(context.config.at("behaviour"));
    const float* x = static_cast<const float*>(context.tensor("x").data);
    float* out = static_cast<float*>(context.tensor("out").data);
    if (behaviour == "unsupported") throw UnsupportedConfig("this variant declines to run");
    // Scratch larger than any machine's address space: operator new throws std::bad_alloc at
    // once (no overcommit can grant it), as a variant asking for too much scratch would.
    if (behaviour == "oom") std::make_unique<char[]>(std::size_t{1} << 62);
    return [=] {
      if (behaviour == "crash") std::raise(SIGSEGV);
      if (behaviour == "abort") std::abort();
      if (behaviour == "hang")
        for (volatile bool forever = true; forever;) {
        }
      for (std::int64_t repeat = 0; repeat < work; ++repeat)
        for (std::int64_t i = 0; i < n; ++i) out[i] = x[i] * 2.0f;
      if (behaviour == "wrong") out[n / 2] += 1.0f;
      if (behaviour == "nan") out[0] = std::numeric_limits<float>::quiet_NaN();
    };
  }
};

class FaultInjectionFamily final : public KernelFamily {
 public:
  std::string name() const override { return "fault_injection"; }
  std::string summary() const override { return "test-only: variants that crash, hang or compute wrong results"; }
  // setup_ms: the float64 reference takes this long, to test that a slow problem set-up is
  // neither charged to nor timed out as the first config.
  std::vector<DimSpec> dims() const override {
    return {{"n", 4096, "elements"}, {"setup_ms", 1, "milliseconds the reference sleeps"}};
  }
  std::vector<Precision> precisions() const override { return {Precision::fp32}; }
  std::vector<TensorSpec> tensors(const Problem& problem) const override {
    return {{"x", problem.dim("n"), false}, {"out", problem.dim("n"), true}};
  }
  double flop_count(const Problem& problem) const override { return static_cast<double>(problem.dim("n")); }
  void reference(const Problem& problem, HostTensors& tensors) const override {
    std::this_thread::sleep_for(std::chrono::milliseconds(problem.dim("setup_ms")));
    const auto named = named_tensors(problem, tensors);
    const auto& x = named.at("x");
    auto& out = named.at("out");
    for (std::int64_t i = 0; i < problem.dim("n"); ++i) out[i] = x[i] * 2.0;
  }
  const GpuSource* cuda_source() const override {
    static constexpr GpuSource source{"kernels/testing/fault_injection.cu", "fault_injection_kernel"};
    return &source;
  }
  const CpuKernel* cpu_kernel() const override {
    static const FaultInjectionCpu kernel;
    return &kernel;
  }
};

}  // namespace

const KernelFamily& fault_injection_family() {
  static const FaultInjectionFamily family;
  return family;
}

}  // namespace ktune
