#include "tuner/distributed/rank_service.hpp"

#include <algorithm>
#include <chrono>
#include <deque>
#include <iostream>
#include <memory>
#include <mutex>
#include <thread>

#include "kernels/family.hpp"
#include "tuner/core/errors.hpp"
#include "tuner/distributed/mpi_remote_ranks.hpp"
#include "tuner/tune/hello_timeout.hpp"
#include "tuner/tune/local_devices.hpp"

namespace ktune {
namespace {

using Clock = std::chrono::steady_clock;
// Rank 0 heartbeats every second while it tunes; between kernels it may be busy for a while
// (exporting headers, building the next space), so a rank waits far longer than rank 0 does.
constexpr double kRankZeroSilenceSeconds = 120.0;

int compiler_threads() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

}  // namespace

int serve_rank(MpiJob& mpi, const std::string& backend, const std::vector<int>& device_indices) {
  // Declared before the devices, whose threads report here until the devices are destroyed.
  std::mutex finished_mutex;
  std::vector<std::pair<std::size_t, FinishedEvaluation>> finished;  // slot, result
  LocalDevices local(backend, device_indices);
  std::vector<DeviceInfo> infos;
  try {
    infos = local.open(kHelloTimeoutSeconds);
    nlohmann::json devices = nlohmann::json::array();
    // One model per rank: devices of another model than the first stay idle.
    for (const auto& info : infos)
      if (info.fingerprint == infos.front().fingerprint) devices.push_back(info.to_json());
    mpi.send(0, {{"type", "hello"}, {"devices", devices}});
  } catch (const KtuneError& e) {
    std::cerr << "ktune: MPI rank " << mpi.rank() << ": " << e.what() << "\n";
    mpi.send(0, {{"type", "hello"}, {"error", e.what()}, {"exit_code", static_cast<int>(e.code())}});
    infos.clear();
  }

  std::vector<bool> busy(infos.size(), false);
  std::optional<EvaluationTask> task;
  std::unique_ptr<VariantBuilder> builder;
  bool ending = false;  // "end" came while jobs still ran: drop the builder once they are done
  std::deque<EvaluationJob> queued;
  auto last_heard = Clock::now(), last_heartbeat = Clock::now();

  while (true) {
    bool quit = false;
    while (auto message = mpi.try_receive(0)) {
      last_heard = Clock::now();
      const std::string type = message->value("type", "");
      if (type == "begin") {
        task = EvaluationTask::from_json(message->at("task"));
        const KernelFamily& family = find_family(task->problem.family);
        builder = make_variant_builder(backend, family, task->problem,
                                       infos.empty() ? "" : infos.front().properties.value("compile_arch", ""),
                                       compiler_threads());
        ending = false;
      } else if (type == "job") {
        EvaluationJob job = EvaluationJob::from_json(message->at("job"));
        if (builder) builder->prefetch(job.index, job.config);  // compiles while the device measures
        queued.push_back(std::move(job));
      } else if (type == "end") {
        ending = true;
      } else if (type == "quit") {
        quit = true;
        if (!message->value("finalize", true)) mpi.skip_finalize();
      }
    }
    if (quit) break;
    for (std::size_t slot = 0; slot < infos.size() && !queued.empty() && task; ++slot) {
      if (busy[slot] || infos[slot].fingerprint != infos.front().fingerprint) continue;
      busy[slot] = true;
      local.start(slot, *task, builder.get(), std::move(queued.front()), [&, slot](FinishedEvaluation done) {
        std::lock_guard lock(finished_mutex);
        finished.emplace_back(slot, std::move(done));
      });
      queued.pop_front();
    }
    {
      std::lock_guard lock(finished_mutex);
      for (auto& [slot, done] : finished) {
        busy[slot] = false;
        done.device = "rank " + std::to_string(mpi.rank()) + " " + done.device;
        mpi.send(0, {{"type", "finished"}, {"done", done.to_json()}});
      }
      finished.clear();
    }
    if (ending && queued.empty() && std::find(busy.begin(), busy.end(), true) == busy.end()) {
      builder.reset();
      task.reset();
      ending = false;
    }
    const auto now = Clock::now();
    if (now - last_heartbeat >= std::chrono::duration<double>(kHeartbeatSeconds)) {
      mpi.send(0, {{"type", "heartbeat"}});
      last_heartbeat = now;
    }
    if (now - last_heard > std::chrono::duration<double>(kRankZeroSilenceSeconds)) {
      std::cerr << "ktune: MPI rank " << mpi.rank() << ": rank 0 has been silent for " << kRankZeroSilenceSeconds
                << " s; leaving\n";
      return 1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return 0;
}

}  // namespace ktune
