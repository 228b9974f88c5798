// Where a tune's configs are measured: the devices of this host (LocalDevices) and, in an MPI
// job, those of the other ranks (RemoteRanks). The tune loop submits jobs while there is room and
// takes finished evaluations in the order they end. Only devices of one model (one fingerprint)
// take part in a task, so every measurement of a tune is valid for the device it is recorded
// under. A rank that dies loses only its jobs in flight: they go to the next free device.
//
//   EvaluationPool pool(local, local_infos, remote);      // remote may be nullptr
//   pool.begin(task, fingerprint, builder);
//   while (...) { if (pool.has_room()) pool.submit(job); else handle(pool.wait()); }
//   pool.end();
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "tuner/tune/evaluation_job.hpp"
#include "tuner/tune/local_devices.hpp"
#include "tuner/tune/remote_ranks.hpp"

namespace ktune {

struct PoolDevice {
  std::string label;  // "cuda:0", "rank 2 cuda:1"
  DeviceInfo info;
};

class EvaluationPool {
 public:
  EvaluationPool(LocalDevices& local, std::vector<DeviceInfo> local_infos, RemoteRanks* remote);

  // Every device the pool has, this host's first.
  std::vector<PoolDevice> devices() const;
  // The device models present, by fingerprint, in order of first appearance.
  std::vector<std::string> fingerprints() const;
  // Starts a task on the live devices of model `fingerprint`. `builder` (may be null) builds
  // variants for this host's devices; remote ranks build their own. `queue_ahead`: a single
  // device also gets a config waiting beside the one it measures (several always do); a tune
  // with a learning strategy then observes results in the order of tuner/tune/observation_order.hpp,
  // so that a resumed tune, which finds results at once, still proposes the same configs.
  void begin(const EvaluationTask& task, const std::string& fingerprint, VariantBuilder* builder,
             bool queue_ahead = false);
  // Devices of the task still alive.
  std::size_t devices_in_use() const;
  std::vector<std::string> device_labels_in_use() const;
  // Whether a submitted job would start now rather than wait.
  bool has_room() const;
  std::size_t in_flight() const;  // submitted and not yet returned by wait()
  void submit(EvaluationJob job);
  // Drops the jobs that wait for a device (none has started them); returns how many.
  std::size_t cancel_pending();
  // The next finished evaluation; in_flight() must be above 0. Throws a KtuneError for a
  // harness failure, and BackendUnavailable when every device of the task is lost.
  FinishedEvaluation wait();
  // Lost ranks this task, as "rank N" with the jobs they had.
  const std::vector<std::string>& losses() const { return losses_; }
  void end();
  // For a tune that ends by an exception: drops the waiting jobs, waits for this host's devices
  // to finish what they measure (they use the task's compiler pool, which is about to go), and
  // ends the task. Never throws.
  void abandon() noexcept;

 private:
  struct Running {
    bool remote = false;
    int owner = 0;  // local slot or rank
    EvaluationJob job;  // kept, so a lost rank's jobs can run elsewhere
  };
  std::size_t remote_capacity(int rank) const;  // jobs a rank may hold at once
  // Starts waiting jobs on free devices; mutex_ held. Device threads pass local_only: only the
  // main thread may talk MPI (MPI_THREAD_FUNNELED).
  void dispatch(bool local_only = false);
  void take_remote_news();  // mutex_ held

  LocalDevices& local_;
  std::vector<DeviceInfo> local_infos_;
  RemoteRanks* remote_;

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  EvaluationTask task_;
  VariantBuilder* builder_ = nullptr;
  bool queue_ahead_ = false;  // begin(): a single device also gets a waiting config
  std::vector<bool> local_in_task_, local_busy_;
  std::map<int, std::size_t> rank_devices_in_task_;  // rank -> its devices taking part
  std::map<int, std::size_t> rank_load_;             // rank -> jobs it holds
  std::vector<int> dead_ranks_;
  std::deque<EvaluationJob> pending_;
  std::map<std::uint64_t, Running> running_;
  std::deque<FinishedEvaluation> finished_;
  std::vector<std::string> losses_;
};

}  // namespace ktune
