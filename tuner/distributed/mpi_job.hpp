// This process's place in an MPI job started by `mpirun -n R ktune tune ...`: rank, size and the
// rank's number on its host, and JSON messages between ranks. MPI is started only when the
// process was launched by mpirun; a plain `ktune tune` never touches it.
//
//   MpiJob mpi;                  // MPI_Init_thread when launched by mpirun
//   if (mpi.active() && mpi.rank() != 0) return serve_rank(mpi, ...);
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ktune {

class MpiJob {
 public:
  MpiJob();
  ~MpiJob();  // MPI_Finalize
  MpiJob(const MpiJob&) = delete;
  MpiJob& operator=(const MpiJob&) = delete;

  // Launched by mpirun with more than one rank.
  bool active() const { return size_ > 1; }
  int rank() const { return rank_; }
  int size() const { return size_; }
  int local_rank() const { return local_rank_; }  // among the ranks of this host

  // After a rank has died, MPI_Finalize waits for it forever: every rank then leaves without it
  // (mpirun --enable-recovery still exits 0).
  void skip_finalize() { skip_finalize_ = true; }

  // Sends without waiting for the receiver (a dead rank must not hang the sender); the message
  // is copied and kept until MPI is done with it.
  void send(int destination, const nlohmann::json& message);
  // The next message from `source` (any rank when -1), if one has arrived; never blocks.
  std::optional<nlohmann::json> try_receive(int source, int* from = nullptr);

 private:
  void complete_sends();
  bool initialized_ = false;
  bool skip_finalize_ = false;
  int rank_ = 0, size_ = 1, local_rank_ = 0;
  struct Pending;
  std::vector<Pending*> pending_;
};

// Whether this process was started by an MPI launcher.
bool launched_by_mpirun();

}  // namespace ktune
