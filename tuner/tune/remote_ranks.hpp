// Rank 0's view of the other ranks of an MPI job (tuner/distributed/): each owns the devices of
// its host and measures the configs it is sent. An interface, so the tune loop builds without
// MPI; only an MPI build has an implementation.
#pragma once

#include <utility>
#include <vector>

#include "tuner/core/device.hpp"
#include "tuner/tune/evaluation_job.hpp"

namespace ktune {

class RemoteRanks {
 public:
  struct Rank {
    int rank = 0;
    std::vector<DeviceInfo> devices;  // one model per rank (the rank keeps only its first device's)
  };
  virtual ~RemoteRanks() = default;
  // The ranks that opened their devices.
  virtual const std::vector<Rank>& ranks() const = 0;
  // Every rank prepares for the task (its compiler pool for the problem); jobs of the task follow.
  virtual void begin(const EvaluationTask& task) = 0;
  virtual void send(int rank, const EvaluationJob& job) = 0;
  // Never blocks: the evaluations that came back since the last call, with the rank that
  // measured each, and the ranks found dead (silent for longer than the heartbeat allows).
  virtual void poll(std::vector<std::pair<int, FinishedEvaluation>>& finished, std::vector<int>& lost) = 0;
  // The task is over: ranks drop its compiler pool.
  virtual void end() = 0;
};

}  // namespace ktune
