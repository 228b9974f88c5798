#include "tuner/distributed/mpi_remote_ranks.hpp"

#include <iostream>
#include <thread>

#include "tuner/core/errors.hpp"

namespace ktune {

MpiRemoteRanks::MpiRemoteRanks(MpiJob& mpi, double hello_timeout_s) : mpi_(mpi) {
  const auto deadline = Clock::now() + std::chrono::duration<double>(hello_timeout_s);
  std::map<int, bool> waiting;
  for (int rank = 1; rank < mpi_.size(); ++rank) waiting[rank] = true;
  while (!waiting.empty() && Clock::now() < deadline) {
    int from = -1;
    const auto message = mpi_.try_receive(-1, &from);
    if (!message) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      continue;
    }
    if (message->value("type", "") != "hello" || !waiting.erase(from)) continue;
    if (message->contains("error")) {
      std::cerr << "ktune: MPI rank " << from << " takes no part: " << message->value("error", "") << "\n";
      continue;
    }
    Rank rank{from, {}};
    for (const auto& device : message->at("devices")) rank.devices.push_back(DeviceInfo::from_json(device));
    ranks_.push_back(std::move(rank));
    last_heard_[from] = Clock::now();
  }
  lost_any_ = !waiting.empty();  // a rank that never answered may be dead
  for (const auto& [rank, _] : waiting)
    std::cerr << "ktune: MPI rank " << rank << " did not open its devices within " << hello_timeout_s
              << " s; it takes no part\n";
}

MpiRemoteRanks::~MpiRemoteRanks() {
  // Every rank, not only the live ones: one that answered late must still be told to go. Once
  // a rank is lost, no rank may wait for it in MPI_Finalize.
  const bool finalize = !lost_any_;
  for (int rank = 1; rank < mpi_.size(); ++rank) mpi_.send(rank, {{"type", "quit"}, {"finalize", finalize}});
  if (!finalize) mpi_.skip_finalize();
}

void MpiRemoteRanks::broadcast(const nlohmann::json& message) {
  for (const auto& [rank, _] : last_heard_) mpi_.send(rank, message);
}

void MpiRemoteRanks::begin(const EvaluationTask& task) { broadcast({{"type", "begin"}, {"task", task.to_json()}}); }

void MpiRemoteRanks::send(int rank, const EvaluationJob& job) {
  mpi_.send(rank, {{"type", "job"}, {"job", job.to_json()}});
}

void MpiRemoteRanks::end() { broadcast({{"type", "end"}}); }

void MpiRemoteRanks::poll(std::vector<std::pair<int, FinishedEvaluation>>& finished, std::vector<int>& lost) {
  const auto now = Clock::now();
  if (now - last_heartbeat_ >= std::chrono::duration<double>(kHeartbeatSeconds)) {
    broadcast({{"type", "heartbeat"}});
    last_heartbeat_ = now;
  }
  int from = -1;
  while (auto message = mpi_.try_receive(-1, &from)) {
    const auto heard = last_heard_.find(from);
    if (heard == last_heard_.end()) continue;  // a lost rank's late words
    heard->second = Clock::now();
    if (message->value("type", "") == "finished")
      finished.emplace_back(from, FinishedEvaluation::from_json(message->at("done")));
  }
  for (auto it = last_heard_.begin(); it != last_heard_.end();) {
    if (Clock::now() - it->second > std::chrono::duration<double>(kSilenceLimitSeconds)) {
      lost.push_back(it->first);
      lost_any_ = true;
      it = last_heard_.erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace ktune
