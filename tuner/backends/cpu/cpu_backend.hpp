// The CPU backend: runs a family's CPU implementation on the host's thread pool, timed with
// steady_clock. Inputs and the reference are built once per problem and kept while configs of
// that problem are evaluated. CPU samples are warm-cache timings (no cache flush).
#pragma once

#include <memory>
#include <string>

#include "kernels/thread_pool.hpp"
#include "tuner/backends/backend.hpp"
#include "tuner/measure/engine.hpp"

namespace ktune {

class CpuBackend final : public Backend, private MeasureTarget {
 public:
  CpuBackend();
  ~CpuBackend() override;
  const DeviceInfo& device() const override { return device_; }
  using Backend::evaluate;
  EvaluationResult evaluate(const KernelFamily& family, const Problem& problem, const Config& config,
                            const VariantBuild& build, const MeasureSettings& settings) override;
  void prepare(const KernelFamily& family, const Problem& problem, std::uint64_t seed) override {
    problem_state(family, problem, seed);
  }

  struct ProblemState;  // the problem's buffers and reference (cpu_backend.cpp)

 private:
  ProblemState& problem_state(const KernelFamily& family, const Problem& problem, std::uint64_t seed);
  // The measurement engine's view of this backend (tuner/measure/engine.hpp).
  void prepare_problem(const KernelFamily& family, const Problem& problem, std::uint64_t seed) override;
  std::unique_ptr<LoadedVariant> load(const KernelFamily& family, const Problem& problem, const Config& config,
                                      const VariantBuild& build, EvaluationResult& result) override;
  std::optional<DeviceFault> fault(std::exception_ptr error, MeasurePhase phase) const override;

  DeviceInfo device_;
  ThreadPool pool_;
  std::unique_ptr<ProblemState> state_;  // the problem currently loaded
};

}  // namespace ktune
