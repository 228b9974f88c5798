// The one measurement sequence every backend runs a variant through, after nvbench's
// measure_cold: outputs poisoned -> one verified run -> warm-up -> timed samples, each after an
// optional cache eviction, until the stopping rule is satisfied -> statistics. A backend supplies
// only what differs between devices (MeasureTarget, LoadedVariant): loading a variant, launching
// it, evicting caches, timing, reading outputs back, and judging its own errors.
//
// Samples are queued in batches: a GPU backend records each sample's eviction and launch between
// its own timestamps, back to back, and the host waits once per batch instead of once per sample.
// What a sample measures is unchanged (the eviction still sits between its timestamps' launch and
// the previous sample's); only the host's round trip between samples, during which the GPU used
// to idle, is gone.
#pragma once

#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernels/family.hpp"
#include "tuner/backends/backend.hpp"
#include "tuner/backends/output_check.hpp"
#include "tuner/measure/evaluation.hpp"

namespace ktune {

// Device time of one batch of samples.
struct SampleBatch {
  std::vector<double> kernel_ns;  // one per sample: the variant's launch between its timestamps
  double between_ns = 0;          // spent between the samples' launches: evictions and restores
};

// One output of the verified run, copied to the host.
struct OutputCopy {
  const char* data;
  std::size_t bytes;
  Precision precision;
  std::span<const double> expected;  // the float64 reference of this output
};

// A variant a backend has loaded and bound to the problem's buffers. Any call may throw the
// backend's own error: MeasureTarget::fault judges it.
class LoadedVariant {
 public:
  virtual ~LoadedVariant() = default;
  // Fills the outputs with 0xFF bytes (NaN in every float format, so an element the kernel
  // forgets to write fails the check), restores the read-write tensors, launches once and waits.
  virtual void run_poisoned() = 0;
  // The outputs of that run judged where they are, without reading them back (the CUDA check of
  // closeness families); nullopt when the backend cannot, and read_outputs is used instead.
  virtual std::optional<OutputCheck> check_on_device(const KernelFamily& family, const Problem& problem) {
    (void)family;
    (void)problem;
    return std::nullopt;
  }
  // Host copies of every output of that run, in tensor order; they stay valid while the variant
  // is timed.
  virtual std::vector<OutputCopy> read_outputs() = 0;
  // Whether the problem's float64 reference is still being computed: the engine then times the
  // variant first and checks its outputs after (check_on_device and read_outputs wait for it).
  virtual bool reference_pending() const { return false; }
  // `runs` untimed launches (read-write tensors restored before each).
  virtual void warm_up(int runs) = 0;
  // Queues `count` samples back to back, each [restore read-write tensors] [evict caches when
  // `flush`] start-timestamp launch stop-timestamp, waits for the last and returns their times.
  virtual SampleBatch time(std::size_t count, bool flush) = 0;
  // Whether time() queues samples (a GPU): the engine then asks for batches. A CPU backend, which
  // times each sample on the host, is asked for one at a time after the first few.
  virtual bool queues_samples() const { return true; }
  // Whether the host's cores are idle while samples are timed, so the outputs are compared then.
  virtual bool host_idle_while_timing() const { return true; }
  // The device's clocks and temperature now (NVML on CUDA); null where the backend has none.
  virtual nlohmann::json monitor() { return nullptr; }
  // Notes for the result's message (e.g. a __constant__ symbol the variant compiled out).
  std::string note;
};

// A failure thrown while a variant was measured, as the backend judges it.
struct DeviceFault {
  Outcome outcome;      // launch_error, out_of_memory, crashed, ...
  std::string message;
  bool sticky = false;  // the device is unusable now (the worker must be replaced)
};

// Where in the sequence a failure was thrown: a failing first run is the variant's fault; a
// non-sticky error later (while timing a variant that ran once) is the harness's.
enum class MeasurePhase { first_run, measuring };

class MeasureTarget {
 public:
  virtual ~MeasureTarget() = default;
  // Makes the problem's inputs and reference ready on the device (kept while its configs run).
  virtual void prepare_problem(const KernelFamily& family, const Problem& problem, std::uint64_t seed) = 0;
  // Loads the variant (compiling it when `build` has no binary) and binds it to the problem.
  // nullptr, with result.outcome and message set, when the variant cannot run here.
  virtual std::unique_ptr<LoadedVariant> load(const KernelFamily& family, const Problem& problem, const Config& config,
                                              const VariantBuild& build, EvaluationResult& result) = 0;
  // The outcome of a failure thrown in `phase`; nullopt when it is not the variant's (it is then
  // rethrown: a failure of the harness).
  virtual std::optional<DeviceFault> fault(std::exception_ptr error, MeasurePhase phase) const = 0;
};

// How a GPU backend judges the errors of its runtime API (`Error`: CudaError, HipError, any type
// with sticky()): a sticky one crashed the variant and took the device with it; another one is
// the variant's launch_error in the first run and the harness's (nullopt) later. Anything else
// is the harness's.
template <class Error>
std::optional<DeviceFault> judge_runtime_error(std::exception_ptr error, MeasurePhase phase) {
  try {
    std::rethrow_exception(error);
  } catch (const Error& e) {
    if (e.sticky()) return DeviceFault{Outcome::crashed, e.what(), true};
    if (phase == MeasurePhase::first_run) return DeviceFault{Outcome::launch_error, e.what(), false};
    return std::nullopt;
  } catch (...) {
    return std::nullopt;
  }
}

// How many samples the next batch queues: one at a time for a device that times on the host; a
// first probe of min(min_samples, 10); then about kBatchDeviceNs of device time at the mean so far
// (at most 256), never past the samples `remaining` under the cap, nor (much) past the sampling
// time left (`time_left_ns`, the stopping rule's max_time_s less the samples' time so far).
std::size_t next_batch_size(std::size_t taken, std::size_t min_samples, std::size_t remaining,
                            double mean_sample_ns, double time_left_ns, bool queues_samples);

// Verifies and times one config on `target`. `healthy` becomes false after a sticky fault.
EvaluationResult measure_variant(MeasureTarget& target, const KernelFamily& family, const Problem& problem,
                                 const Config& config, const VariantBuild& build, const MeasureSettings& settings,
                                 bool& healthy);

}  // namespace ktune
