#include "tuner/backends/cpu/cpu_backend.hpp"
#include "tuner/backends/output_check.hpp"

#include <chrono>
#include <cstdlib>
#include <cstring>

#include "kernels/common/cpu_numeric.hpp"
#include "kernels/cpu_kernel.hpp"
#include "tuner/backends/cpu/cpu_device.hpp"
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
};

CpuBackend::CpuBackend() : device_(describe_host_cpu()), pool_(static_cast<int>(device_.limits.at("hardware_threads"))) {}
CpuBackend::~CpuBackend() = default;

CpuBackend::ProblemState& CpuBackend::prepare_problem(const KernelFamily& family, const Problem& problem,
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
  }
  family.reference(problem, host);
  state->expected = std::move(host);
  state_ = std::move(state);
  return *state_;
}

EvaluationResult CpuBackend::evaluate(const KernelFamily& family, const Problem& problem, const Config& config,
                                      const VariantBuild&, const MeasureSettings& settings) {
  EvaluationResult result;
  const CpuKernel* kernel = family.cpu_kernel();
  if (!kernel) {
    result.outcome = Outcome::unsupported;
    result.message = family.name() + " has no CPU implementation";
    return result;
  }
  if (element_bytes(problem.precision) == 0 ||
      !cpu::with_any_storage_type(problem.precision, []<typename T>() {})) {
    result.outcome = Outcome::unsupported;
    result.message = "the CPU backend has no storage for " + std::string(to_string(problem.precision));
    return result;
  }
  ProblemState& state = prepare_problem(family, problem, settings.seed);

  std::function<void()> launch;
  const auto build_start = std::chrono::steady_clock::now();
  try {
    launch = kernel->prepare({problem, config, state.tensors, state.tensor_names, pool_});
  } catch (const UnsupportedConfig& e) {
    result.outcome = Outcome::unsupported;
    result.message = e.what();
    return result;
  } catch (const std::bad_alloc& e) {
    result.outcome = Outcome::out_of_memory;
    result.message = std::string("the variant's memory could not be allocated while preparing it (") + e.what() + ")";
    return result;
  }
  result.compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - build_start).count();

  // Verification run on poisoned outputs: 0xFF bytes are NaN in every float format, so an
  // output element the kernel forgets to write fails the check.
  for (std::size_t t = 0; t < state.specs.size(); ++t)
    if (state.specs[t].is_output) std::memset(state.buffers[t].get(), 0xFF, state.bytes[t]);
  try {
    launch();
  } catch (const std::bad_alloc& e) {
    result.outcome = Outcome::out_of_memory;
    result.message = std::string("the variant's memory could not be allocated while running it (") + e.what() + ")";
    return result;
  } catch (const std::exception& e) {
    result.outcome = Outcome::launch_error;
    result.message = e.what();
    return result;
  }
  std::vector<StoredOutput> outputs;
  for (std::size_t t = 0; t < state.specs.size(); ++t)
    if (state.specs[t].is_output)
      outputs.push_back({state.buffers[t].get(), state.specs[t].precision(problem), state.expected[t]});
  result.error = stored_outputs_error(outputs);
  const Verdict verdict = judge_error(result.error, family.tolerance(problem.precision));
  if (!verdict.passed) {
    result.outcome = Outcome::wrong_result;
    result.message = verdict.message;
    return result;
  }

  for (int i = 0; i < settings.warmup_runs; ++i) launch();
  StoppingRule rule(settings.stopping);
  while (!rule.done()) {
    const auto start = std::chrono::steady_clock::now();
    launch();
    const auto stop = std::chrono::steady_clock::now();
    const double ns = std::chrono::duration<double, std::nano>(stop - start).count();
    result.samples_ns.push_back(ns);
    rule.add(ns);
  }
  result.stats = summarize(result.samples_ns);
  result.outcome = Outcome::ok;
  result.message = verdict.message + "; " + rule.reason();
  return result;
}

}  // namespace ktune
