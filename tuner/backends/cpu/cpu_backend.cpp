#include "tuner/backends/cpu/cpu_backend.hpp"
#include "tuner/backends/output_check.hpp"

#include <chrono>
#include <cstdlib>
#include <cstring>

#include "kernels/common/cpu_numeric.hpp"
#include "kernels/cpu_kernel.hpp"
#include "tuner/backends/cpu/cpu_device.hpp"
#include "tuner/core/errors.hpp"
#include "tuner/measure/engine.hpp"
#include "tuner/measure/verify.hpp"

namespace ktune {
namespace {

struct AlignedFree {
  void operator()(void* p) const { std::free(p); }
};
using AlignedBuffer = std::unique_ptr<void, AlignedFree>;

AlignedBuffer allocate(std::size_t bytes) {
  const std::size_t rounded = (bytes + 63) / 64 * 64;
  void* p = std::aligned_alloc(64, rounded == 0 ? 64 : rounded);
  if (!p) throw std::bad_alloc();
  return AlignedBuffer(p);
}

}  // namespace

struct CpuBackend::ProblemState {
  std::string key;  // family, problem key and seed
  std::vector<TensorSpec> specs;
  std::vector<AlignedBuffer> buffers;  // in the problem's precision
  std::vector<std::size_t> bytes;
  std::vector<CpuTensor> tensors;
  std::vector<std::string> tensor_names;
  HostTensors expected;  // reference outputs (inputs too, unused after setup)
  // The initial contents of each read-write tensor (empty elsewhere), copied back before every
  // launch so that every sample computes the same thing.
  std::vector<std::vector<char>> pristine;
};

CpuBackend::CpuBackend() : device_(describe_host_cpu()), pool_(static_cast<int>(device_.limits.at("hardware_threads"))) {}
CpuBackend::~CpuBackend() = default;

CpuBackend::ProblemState& CpuBackend::problem_state(const KernelFamily& family, const Problem& problem,
                                                    std::uint64_t seed) {
  // The family too: Problem::key() leaves it out, and one worker may serve several (ktune bench).
  const std::string key = problem.family + ":" + problem.key() + "#" + std::to_string(seed);
  if (state_ && state_->key == key) return *state_;
  state_.reset();  // free the previous problem's memory first
  auto state = std::make_unique<ProblemState>();
  state->key = key;
  state->specs = family.tensors(problem);
  HostTensors host = family.make_inputs(problem, seed);
  for (std::size_t t = 0; t < state->specs.size(); ++t) {
    const std::size_t bytes = static_cast<std::size_t>(state->specs[t].bytes(problem));
    state->buffers.push_back(allocate(bytes));
    state->bytes.push_back(bytes);
    state->tensors.push_back({state->buffers.back().get(), state->specs[t].elements});
    state->tensor_names.push_back(state->specs[t].name);
    if (!state->specs[t].is_output) {
      // The reference sees the inputs exactly as the kernel does: rounded to the precision.
      cpu::store_values(state->specs[t].precision(problem), host[t], state->buffers.back().get());
      cpu::load_values(state->specs[t].precision(problem), state->buffers.back().get(), host[t]);
    }
    state->pristine.emplace_back();
    if (state->specs[t].read_write) {
      const char* stored = static_cast<const char*>(state->buffers.back().get());
      state->pristine.back().assign(stored, stored + bytes);
    }
  }
  family.reference(problem, host);
  state->expected = std::move(host);
  state_ = std::move(state);
  return *state_;
}

// A CPU variant: the kernel's prepared launch over the problem's buffers, timed on the host.
class CpuVariant final : public LoadedVariant {
 public:
  CpuVariant(CpuBackend::ProblemState& state, const Problem& problem, std::function<void()> launch)
      : state_(state), problem_(problem), launch_(std::move(launch)) {}

  void run_poisoned() override {
    for (std::size_t t = 0; t < state_.specs.size(); ++t)
      if (state_.specs[t].is_output && !state_.specs[t].read_write) std::memset(state_.buffers[t].get(), 0xFF, state_.bytes[t]);
    restore();
    launch_();
  }
  std::vector<OutputCopy> read_outputs() override {  // already on the host
    std::vector<OutputCopy> outputs;
    for (std::size_t t = 0; t < state_.specs.size(); ++t)
      if (state_.specs[t].is_output)
        outputs.push_back({static_cast<const char*>(state_.buffers[t].get()), state_.bytes[t],
                           state_.specs[t].precision(problem_), state_.expected[t]});
    return outputs;
  }
  void warm_up(int runs) override {
    for (int i = 0; i < runs; ++i) {
      restore();
      launch_();
    }
  }
  // Warm-cache samples (no eviction on the CPU), each timed with steady_clock; restores of
  // read-write tensors happen outside the timed span and count as time between samples.
  SampleBatch time(std::size_t count, bool) override {
    using Clock = std::chrono::steady_clock;
    SampleBatch batch;
    for (std::size_t i = 0; i < count; ++i) {
      const auto before = Clock::now();
      restore();
      const auto start = Clock::now();
      launch_();
      const auto stop = Clock::now();
      batch.between_ns += std::chrono::duration<double, std::nano>(start - before).count();
      batch.kernel_ns.push_back(std::chrono::duration<double, std::nano>(stop - start).count());
    }
    return batch;
  }
  bool queues_samples() const override { return false; }
  // The kernel runs on every core: the outputs are compared before timing, not during it.
  bool host_idle_while_timing() const override { return false; }

 private:
  void restore() {
    for (std::size_t t = 0; t < state_.specs.size(); ++t)
      if (state_.specs[t].read_write) std::memcpy(state_.buffers[t].get(), state_.pristine[t].data(), state_.bytes[t]);
  }

  CpuBackend::ProblemState& state_;
  const Problem& problem_;
  std::function<void()> launch_;
};

void CpuBackend::prepare_problem(const KernelFamily& family, const Problem& problem, std::uint64_t seed) {
  problem_state(family, problem, seed);
}

std::unique_ptr<LoadedVariant> CpuBackend::load(const KernelFamily& family, const Problem& problem,
                                                const Config& config, const VariantBuild&, EvaluationResult& result) {
  const CpuKernel* kernel = family.cpu_kernel();
  if (!kernel) {
    result.outcome = Outcome::unsupported;
    result.message = family.name() + " has no CPU implementation";
    return nullptr;
  }
  if (element_bytes(problem.precision) == 0 || !cpu::with_any_storage_type(problem.precision, []<typename T>() {})) {
    result.outcome = Outcome::unsupported;
    result.message = "the CPU backend has no storage for " + std::string(to_string(problem.precision));
    return nullptr;
  }
  ProblemState& state = *state_;
  const auto build_start = std::chrono::steady_clock::now();
  std::function<void()> launch;
  try {
    launch = kernel->prepare({problem, config, state.tensors, state.tensor_names, pool_});
  } catch (const UnsupportedConfig& e) {
    result.outcome = Outcome::unsupported;
    result.message = e.what();
    return nullptr;
  } catch (const std::bad_alloc& e) {
    result.outcome = Outcome::out_of_memory;
    result.message = std::string("the variant's memory could not be allocated while preparing it (") + e.what() + ")";
    return nullptr;
  }
  result.compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - build_start).count();
  return std::make_unique<CpuVariant>(state, problem, std::move(launch));
}

std::optional<DeviceFault> CpuBackend::fault(std::exception_ptr error, MeasurePhase phase) const {
  try {
    std::rethrow_exception(error);
  } catch (const std::bad_alloc& e) {
    const char* when = phase == MeasurePhase::first_run ? "running it" : "measuring it";
    return DeviceFault{Outcome::out_of_memory,
                       std::string("the variant's memory could not be allocated while ") + when + " (" + e.what() + ")"};
  } catch (const KtuneError&) {
    return std::nullopt;  // bad input or a harness failure, not the variant's: rethrown
  } catch (const std::exception& e) {
    if (phase != MeasurePhase::first_run) return std::nullopt;
    return DeviceFault{Outcome::launch_error, e.what()};
  } catch (...) {
    return std::nullopt;
  }
}

EvaluationResult CpuBackend::evaluate(const KernelFamily& family, const Problem& problem, const Config& config,
                                      const VariantBuild& build, const MeasureSettings& settings) {
  bool healthy = true;  // a CPU variant cannot poison the process's state the way a GPU fault does
  return measure_variant(*this, family, problem, config, build, settings, healthy);
}

}  // namespace ktune
