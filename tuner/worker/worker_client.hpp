// The tuner's handle on one worker process. A variant that crashes the worker or never answers
// becomes a `crashed` / `timeout` result; the next request starts a fresh worker.
//
//   WorkerClient worker("cpu", 0);
//   DeviceInfo device = worker.hello(30.0);
//   EvaluationResult r = worker.evaluate(problem, config, build, settings, /*timeout_s=*/60.0);
#pragma once

#include <sys/types.h>

#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "tuner/backends/backend.hpp"
#include "tuner/backends/variant_builder.hpp"
#include "tuner/worker/line_channel.hpp"

namespace ktune {

// Kills every worker in use and their process groups. Async-signal-safe: for the tuner's
// signal handlers, so no worker outlives a tuner that is told to go at once.
void kill_active_workers();
// For a command that stops at a signal and will not wait for its workers: kills them as
// kill_active_workers() does, and from then on no worker starts again and no killed config is
// evaluated again, so whatever waits on a worker or a compile process returns at once (with a
// `crashed` result, or a failed build). Async-signal-safe.
void abandon_workers();
// Whether abandon_workers() was called: a result that failed since is the stop's doing, not the
// config's, and is dropped rather than recorded.
bool workers_abandoned();

class WorkerClient {
 public:
  WorkerClient(std::string backend, int device_index);
  ~WorkerClient();
  WorkerClient(const WorkerClient&) = delete;
  WorkerClient& operator=(const WorkerClient&) = delete;

  // Starts the worker and opens the device. Errors the worker reports (no device: exit 3) are
  // rethrown as the matching KtuneError.
  DeviceInfo hello(double timeout_s);
  // `timeout_s` bounds the config's evaluation; `setup_timeout_s` the preparation of a problem the
  // worker has not prepared yet (inputs and float64 reference), whose failure is a CheckFailed.
  EvaluationResult evaluate(const Problem& problem, const Config& config, const VariantBuild& build,
                            const MeasureSettings& settings, double timeout_s, double setup_timeout_s);
  // Builds one variant in the worker process, which opens no device for it: NVRTC and hiprtc
  // scale across processes where their threads in one process do not. A worker that crashes or
  // hangs is a failed build with the reason.
  BuiltVariant compile(const Problem& problem, const Config& config, const std::string& arch, BuildEffort effort,
                       const std::vector<std::string>& launch_only, double timeout_s);
  int restarts() const { return restarts_; }
  // Seconds the last evaluate() spent preparing the problem in a fresh worker (0 when the worker
  // had it ready): set-up, not evaluation, so time limits leave it out.
  double last_prepare_seconds() const { return last_prepare_seconds_; }

 private:
  void start();
  void stop(bool graceful);
  void release_channels();
  // Sends one request and waits for its reply; on crash or timeout fills `failure` instead.
  bool exchange(const nlohmann::json& request, double timeout_s, nlohmann::json& reply, EvaluationResult& failure);
  EvaluationResult evaluate_once(const Problem& problem, const Config& config, const VariantBuild& build,
                                 const MeasureSettings& settings, double timeout_s, double setup_timeout_s);
  std::string stderr_tail();

  std::string backend_;
  int device_index_;
  pid_t pid_ = -1;
  int request_fd_ = -1;
  std::unique_ptr<LineReader> responses_;
  int stderr_fd_ = -1;
  std::thread stderr_drain_;
  std::mutex stderr_mutex_;
  std::string stderr_text_;  // last few KiB the worker wrote to stderr
  int restarts_ = 0;
  bool started_once_ = false;
  std::string prepared_;  // family, problem key and seed the running worker has ready
  bool reference_pending_ = false;  // the worker still computes that problem's float64 reference
  double last_prepare_seconds_ = 0;
  int last_death_signal_ = 0;  // the signal that ended the last worker that died, 0 for none
};

}  // namespace ktune
