#include "tuner/tune/evaluation_pool.hpp"

#include <algorithm>
#include <chrono>
#include <iostream>

#include "tuner/core/errors.hpp"

namespace ktune {
namespace {

// A remote rank holds two jobs per device: one measuring, one compiling on the rank meanwhile
// (remote ranks build their own variants, so this keeps their GPUs from waiting on NVRTC).
constexpr std::size_t kRemoteJobsPerDevice = 2;

}  // namespace

EvaluationPool::EvaluationPool(LocalDevices& local, std::vector<DeviceInfo> local_infos, RemoteRanks* remote)
    : local_(local), local_infos_(std::move(local_infos)), remote_(remote) {
  local_in_task_.assign(local_infos_.size(), false);
  local_busy_.assign(local_infos_.size(), false);
}

std::vector<PoolDevice> EvaluationPool::devices() const {
  std::vector<PoolDevice> all;
  for (std::size_t slot = 0; slot < local_infos_.size(); ++slot) all.push_back({local_.label(slot), local_infos_[slot]});
  if (remote_)
    for (const auto& rank : remote_->ranks())
      for (std::size_t i = 0; i < rank.devices.size(); ++i)
        all.push_back({"rank " + std::to_string(rank.rank) + " device " + std::to_string(i), rank.devices[i]});
  return all;
}

std::vector<std::string> EvaluationPool::fingerprints() const {
  std::vector<std::string> models;
  for (const auto& device : devices())
    if (std::find(models.begin(), models.end(), device.info.fingerprint) == models.end())
      models.push_back(device.info.fingerprint);
  return models;
}

void EvaluationPool::begin(const EvaluationTask& task, const std::string& fingerprint, VariantBuilder* builder,
                           bool queue_ahead) {
  std::lock_guard lock(mutex_);
  task_ = task;
  queue_ahead_ = queue_ahead;
  builder_ = builder;
  losses_.clear();
  for (std::size_t slot = 0; slot < local_infos_.size(); ++slot)
    local_in_task_[slot] = local_infos_[slot].fingerprint == fingerprint;
  rank_devices_in_task_.clear();
  rank_load_.clear();
  if (remote_) {
    bool any = false;
    for (const auto& rank : remote_->ranks()) {
      if (std::find(dead_ranks_.begin(), dead_ranks_.end(), rank.rank) != dead_ranks_.end()) continue;
      if (rank.devices.empty() || rank.devices.front().fingerprint != fingerprint) continue;
      rank_devices_in_task_[rank.rank] = rank.devices.size();
      rank_load_[rank.rank] = 0;
      any = true;
    }
    if (any) remote_->begin(task);
  }
}

std::size_t EvaluationPool::devices_in_use() const {
  std::lock_guard lock(mutex_);
  std::size_t count = std::count(local_in_task_.begin(), local_in_task_.end(), true);
  for (const auto& [rank, devices] : rank_devices_in_task_) count += devices;
  return count;
}

std::vector<std::string> EvaluationPool::device_labels_in_use() const {
  std::vector<std::string> labels;
  std::lock_guard lock(mutex_);
  for (std::size_t slot = 0; slot < local_infos_.size(); ++slot)
    if (local_in_task_[slot]) labels.push_back(local_.label(slot));
  for (const auto& [rank, devices] : rank_devices_in_task_)
    labels.push_back("rank " + std::to_string(rank) + " (" + std::to_string(devices) + " device" +
                     (devices == 1 ? ")" : "s)"));
  return labels;
}

std::size_t EvaluationPool::remote_capacity(int rank) const {
  const auto found = rank_devices_in_task_.find(rank);
  return found == rank_devices_in_task_.end() ? 0 : found->second * kRemoteJobsPerDevice;
}

bool EvaluationPool::has_room() const {
  std::lock_guard lock(mutex_);
  std::size_t free = 0;
  // With several local devices, one job waits for each beside the one it measures, so a device
  // that finishes starts the next at once, while the tune loop records results one at a time.
  // One device does the same when the task queues ahead (see begin()): it no longer idles
  // through each database write, strategy proposal and worker round trip. Otherwise it keeps one
  // config in flight: a time limit and Ctrl-C stop right after it.
  std::size_t local_devices = 0;
  for (std::size_t slot = 0; slot < local_infos_.size(); ++slot) {
    free += local_in_task_[slot] && !local_busy_[slot];
    local_devices += local_in_task_[slot];
  }
  const std::size_t spare = local_devices > 1 || queue_ahead_ ? local_devices : 0;
  for (const auto& [rank, load] : rank_load_) free += remote_capacity(rank) - std::min(load, remote_capacity(rank));
  // Without a spare, a result the tune loop has not taken yet still holds its device's place: a
  // config that finished while the loop was busy must be observed before the next is proposed,
  // or a learning strategy proposes from fewer results than it would on a rerun, and an
  // identical rerun is no longer a resume.
  const std::size_t unseen = spare == 0 ? finished_.size() : 0;
  return free + spare > pending_.size() + unseen;
}

std::size_t EvaluationPool::in_flight() const {
  std::lock_guard lock(mutex_);
  return pending_.size() + running_.size() + finished_.size();
}

void EvaluationPool::submit(EvaluationJob job) {
  std::lock_guard lock(mutex_);
  pending_.push_back(std::move(job));
  dispatch();
}

std::size_t EvaluationPool::cancel_pending() {
  std::lock_guard lock(mutex_);
  const std::size_t dropped = pending_.size();
  pending_.clear();
  return dropped;
}

void EvaluationPool::dispatch(bool local_only) {
  while (!pending_.empty()) {
    EvaluationJob& job = pending_.front();
    bool placed = false;
    for (std::size_t slot = 0; slot < local_infos_.size() && !placed; ++slot) {
      if (!local_in_task_[slot] || local_busy_[slot]) continue;
      local_busy_[slot] = true;
      running_[job.id] = Running{false, static_cast<int>(slot), job};
      local_.start(slot, task_, builder_, job, [this, slot](FinishedEvaluation done) {
        // On the device's thread: it takes its next job at once, before the tune loop has
        // recorded this result (recording is the tune loop's work, and must not idle a GPU).
        std::lock_guard lock(mutex_);
        local_busy_[slot] = false;
        running_.erase(done.job.id);
        finished_.push_back(std::move(done));
        dispatch(/*local_only=*/true);  // MPI is the main thread's alone
        changed_.notify_all();
      });
      placed = true;
    }
    for (auto& [rank, load] : rank_load_) {
      if (placed || local_only) break;
      if (load >= remote_capacity(rank)) continue;
      ++load;
      running_[job.id] = Running{true, rank, job};
      remote_->send(rank, job);
      placed = true;
    }
    if (!placed) return;
    pending_.pop_front();
  }
}

void EvaluationPool::take_remote_news() {
  std::vector<std::pair<int, FinishedEvaluation>> arrived;
  std::vector<int> lost;
  remote_->poll(arrived, lost);
  for (auto& [rank, done] : arrived) {
    const auto running = running_.find(done.job.id);
    // A rank declared lost may still answer; its jobs already went elsewhere.
    if (running == running_.end() || !running->second.remote || running->second.owner != rank) continue;
    running_.erase(running);
    if (auto load = rank_load_.find(rank); load != rank_load_.end() && load->second > 0) --load->second;
    finished_.push_back(std::move(done));
  }
  for (int rank : lost) {
    if (std::find(dead_ranks_.begin(), dead_ranks_.end(), rank) != dead_ranks_.end()) continue;
    dead_ranks_.push_back(rank);
    std::size_t moved = 0;
    for (auto it = running_.begin(); it != running_.end();) {
      if (it->second.remote && it->second.owner == rank) {
        pending_.push_front(it->second.job);
        it = running_.erase(it);
        ++moved;
      } else {
        ++it;
      }
    }
    const std::string loss = "rank " + std::to_string(rank) + " (" + std::to_string(moved) + " config" +
                             (moved == 1 ? "" : "s") + " in flight, measured again elsewhere)";
    if (rank_devices_in_task_.count(rank)) losses_.push_back(loss);
    std::cerr << "ktune: lost MPI " << loss << "\n";
    rank_devices_in_task_.erase(rank);
    rank_load_.erase(rank);
  }
}

FinishedEvaluation EvaluationPool::wait() {
  std::unique_lock lock(mutex_);
  while (true) {
    dispatch();
    if (!finished_.empty()) {
      FinishedEvaluation done = std::move(finished_.front());
      finished_.pop_front();
      if (done.failure)
        throw KtuneError(static_cast<ExitCode>(done.failure->exit_code), done.device + ": " + done.failure->message);
      return done;
    }
    if (remote_) {  // also keeps the ranks' heartbeat going while only local devices work
      take_remote_news();
      if (!finished_.empty()) continue;
    }
    const bool any_device = std::count(local_in_task_.begin(), local_in_task_.end(), true) > 0 ||
                            !rank_devices_in_task_.empty();
    if (!any_device && running_.empty())
      throw BackendUnavailable("every device of this tune was lost (" + std::to_string(pending_.size()) +
                               " configs were still to measure); the results so far are in the database, and "
                               "rerunning the tune resumes from them");
    // Local devices notify; remote ranks are polled.
    changed_.wait_for(lock, remote_ ? std::chrono::milliseconds(2)
                                                           : std::chrono::milliseconds(200));
  }
}

void EvaluationPool::abandon() noexcept {
  try {
    std::unique_lock lock(mutex_);
    pending_.clear();
    changed_.wait(lock, [&] {
      return std::none_of(running_.begin(), running_.end(), [](const auto& entry) { return !entry.second.remote; });
    });
    running_.clear();
    finished_.clear();
    rank_load_.clear();
    lock.unlock();
    end();
  } catch (...) {  // ending is best effort here; the tune's own error is what is reported
  }
}

void EvaluationPool::end() {
  std::lock_guard lock(mutex_);
  if (remote_ && !rank_devices_in_task_.empty()) remote_->end();
  rank_devices_in_task_.clear();
  rank_load_.clear();
  builder_ = nullptr;
}

}  // namespace ktune
