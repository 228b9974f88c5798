// Rank 0's side of an MPI tune: the other ranks as RemoteRanks for the EvaluationPool. Each rank
// says which devices it opened (its hello); jobs go out as messages and results come back the
// same way. Both sides send a heartbeat every second, so a rank that dies is noticed within
// kSilenceLimitSeconds even when it held no job.
//
// Protocol (JSON, one message each):
//   rank r -> 0: {"type":"hello","devices":[...]} | {"type":"hello","error":..,"exit_code":n}
//   0 -> rank r: {"type":"begin","task":{...}}   {"type":"job","job":{...}}   {"type":"end"}
//                {"type":"quit","finalize":false when a rank was lost}
//   rank r -> 0: {"type":"finished","done":{...}}
//   both ways:   {"type":"heartbeat"}
#pragma once

#include <chrono>
#include <map>

#include "tuner/distributed/mpi_job.hpp"
#include "tuner/tune/remote_ranks.hpp"

namespace ktune {

inline constexpr double kHeartbeatSeconds = 1.0;
// A rank silent this long is lost (its heartbeat comes from a thread that never measures).
inline constexpr double kSilenceLimitSeconds = 10.0;

class MpiRemoteRanks final : public RemoteRanks {
 public:
  // Waits for every other rank's hello (at most `hello_timeout_s`). Ranks that found no device,
  // or said nothing in time, are left out with a warning.
  MpiRemoteRanks(MpiJob& mpi, double hello_timeout_s);
  ~MpiRemoteRanks() override;  // tells every rank to quit

  const std::vector<Rank>& ranks() const override { return ranks_; }
  void begin(const EvaluationTask& task) override;
  void send(int rank, const EvaluationJob& job) override;
  void poll(std::vector<std::pair<int, FinishedEvaluation>>& finished, std::vector<int>& lost) override;
  void end() override;

 private:
  using Clock = std::chrono::steady_clock;
  void broadcast(const nlohmann::json& message);

  MpiJob& mpi_;
  std::vector<Rank> ranks_;
  std::map<int, Clock::time_point> last_heard_;  // live ranks only
  Clock::time_point last_heartbeat_ = Clock::now();
  bool lost_any_ = false;
};

}  // namespace ktune
