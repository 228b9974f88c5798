// The devices of this host that a tune measures on: one worker process per device, each driven
// by a thread of its own, so several GPUs measure different configs at once.
//
//   LocalDevices devices("cuda", {0, 1});
//   std::vector<DeviceInfo> infos = devices.open(120.0);
//   devices.start(0, task, builder, job, [](FinishedEvaluation done) { ... });  // returns at once
#pragma once

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "tuner/backends/variant_builder.hpp"
#include "tuner/core/device.hpp"
#include "tuner/tune/evaluation_job.hpp"

namespace ktune {

class WorkerClient;

class LocalDevices {
 public:
  using Done = std::function<void(FinishedEvaluation)>;

  LocalDevices(std::string backend, std::vector<int> device_indices);
  ~LocalDevices();
  LocalDevices(const LocalDevices&) = delete;
  LocalDevices& operator=(const LocalDevices&) = delete;

  // Starts every device's worker and opens its device, all at once (driver start-up is slow).
  // Rethrows the first device's error (no device: BackendUnavailable, exit 3).
  std::vector<DeviceInfo> open(double timeout_s);
  std::size_t size() const { return slots_.size(); }
  // "cuda:1": how results name the device that measured them.
  std::string label(std::size_t slot) const;
  bool busy(std::size_t slot) const;
  // Builds (through `builder`, when the backend has one) and evaluates `job` on device `slot`,
  // which must not be busy; `done` is called on that device's thread when it is finished.
  void start(std::size_t slot, const EvaluationTask& task, VariantBuilder* builder, EvaluationJob job, Done done);

 private:
  struct Slot;
  void run(Slot& slot);

  std::string backend_;
  std::vector<std::unique_ptr<Slot>> slots_;
};

// Runs one job on `worker`: the variant's build, then its verification and timing. Harness
// failures come back in FinishedEvaluation::failure, never as exceptions.
FinishedEvaluation evaluate_job(WorkerClient& worker, const EvaluationTask& task, VariantBuilder* builder,
                                const EvaluationJob& job);

}  // namespace ktune
