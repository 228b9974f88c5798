#include "tuner/tune/local_devices.hpp"

#include <chrono>
#include <exception>
#include <future>

#include "kernels/family.hpp"
#include "tuner/core/errors.hpp"
#include "tuner/worker/worker_client.hpp"

namespace ktune {

struct LocalDevices::Slot {
  int device_index = 0;
  std::unique_ptr<WorkerClient> worker;
  std::thread thread;
  mutable std::mutex mutex;
  std::condition_variable wake;
  bool stopping = false;
  // The job in hand, from start() until `done` has been called.
  struct Work {
    EvaluationTask task;
    VariantBuilder* builder;
    EvaluationJob job;
    Done done;
  };
  std::optional<Work> work;
};

LocalDevices::LocalDevices(std::string backend, std::vector<int> device_indices) : backend_(std::move(backend)) {
  for (int index : device_indices) {
    auto slot = std::make_unique<Slot>();
    slot->device_index = index;
    slot->worker = std::make_unique<WorkerClient>(backend_, index);
    slots_.push_back(std::move(slot));
  }
}

LocalDevices::~LocalDevices() {
  for (auto& slot : slots_) {
    {
      std::lock_guard lock(slot->mutex);
      slot->stopping = true;
    }
    slot->wake.notify_all();
  }
  for (auto& slot : slots_)
    if (slot->thread.joinable()) slot->thread.join();
}

std::vector<DeviceInfo> LocalDevices::open(double timeout_s) {
  // Each device's thread starts its worker and keeps it: workers die with the thread that
  // started them (PR_SET_PDEATHSIG), so no short-lived thread may start one.
  std::vector<std::future<DeviceInfo>> hellos;
  for (auto& slot : slots_) {
    if (slot->thread.joinable()) throw std::logic_error("LocalDevices::open called twice");
    auto opened = std::make_shared<std::promise<DeviceInfo>>();
    hellos.push_back(opened->get_future());
    slot->thread = std::thread([this, raw = slot.get(), opened, timeout_s] {
      try {
        opened->set_value(raw->worker->hello(timeout_s));
      } catch (...) {
        opened->set_exception(std::current_exception());
        return;
      }
      run(*raw);
    });
  }
  std::vector<DeviceInfo> infos;
  std::exception_ptr first_error;
  for (auto& hello : hellos) {
    try {
      infos.push_back(hello.get());
    } catch (...) {
      if (!first_error) first_error = std::current_exception();
    }
  }
  if (first_error) std::rethrow_exception(first_error);
  return infos;
}

std::string LocalDevices::label(std::size_t slot) const {
  return backend_ + ":" + std::to_string(slots_.at(slot)->device_index);
}

bool LocalDevices::busy(std::size_t slot) const {
  std::lock_guard lock(slots_.at(slot)->mutex);
  return slots_[slot]->work.has_value();
}

void LocalDevices::start(std::size_t index, const EvaluationTask& task, VariantBuilder* builder, EvaluationJob job,
                         Done done) {
  Slot& slot = *slots_.at(index);
  {
    std::lock_guard lock(slot.mutex);
    if (slot.work) throw std::logic_error("LocalDevices::start: " + label(index) + " is busy");
    slot.work = Slot::Work{task, builder, std::move(job), std::move(done)};
  }
  slot.wake.notify_all();
}

void LocalDevices::run(Slot& slot) {
  while (true) {
    std::unique_lock lock(slot.mutex);
    slot.wake.wait(lock, [&] { return slot.stopping || slot.work.has_value(); });
    if (slot.stopping) return;
    Slot::Work work = *slot.work;
    lock.unlock();
    FinishedEvaluation done = evaluate_job(*slot.worker, work.task, work.builder, work.job);
    done.device = backend_ + ":" + std::to_string(slot.device_index);
    lock.lock();
    slot.work.reset();  // idle before `done` runs, so whoever hears of it may hand this device more
    lock.unlock();
    work.done(std::move(done));
  }
}

FinishedEvaluation evaluate_job(WorkerClient& worker, const EvaluationTask& task, VariantBuilder* builder,
                                const EvaluationJob& job) {
  const auto start = std::chrono::steady_clock::now();
  FinishedEvaluation done;
  done.job = job;
  try {
    VariantBuild build;
    BuiltVariant built;
    if (builder) {
      built = builder->get(job.index, job.config);
      build = built.build;
    }
    build.launch = job.launch;
    if (builder && !built.ok) {
      done.result.outcome = Outcome::compile_error;
      done.result.message = built.log;
      done.result.compile_ms = build.compile_ms;
    } else {
      MeasureSettings settings = task.settings;
      settings.stopping.race_ns = job.race_ns;
      done.result = worker.evaluate(task.problem, job.config, build, settings, task.config_timeout_s,
                                      task.setup_timeout_s);
      done.prepare_seconds = worker.last_prepare_seconds();
    }
  } catch (const KtuneError& e) {
    done.failure = HarnessFailure{static_cast<int>(e.code()), e.what()};
  } catch (const std::exception& e) {
    done.failure = HarnessFailure{static_cast<int>(ExitCode::check_failed), e.what()};
  }
  // A stop that killed this config's worker or compile process, not the config, ended it.
  if (workers_abandoned() && (done.failure || done.result.outcome != Outcome::ok)) {
    done.abandoned = true;
    done.failure.reset();
  }
  done.evaluation_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() - done.prepare_seconds;
  return done;
}

}  // namespace ktune
