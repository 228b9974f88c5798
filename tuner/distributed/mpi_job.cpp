#include "tuner/distributed/mpi_job.hpp"

#include <mpi.h>

#include <cstdlib>
#include <stdexcept>

namespace ktune {
namespace {

constexpr int kMessageTag = 7;

void check(int code, const char* what) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw std::runtime_error(std::string("MPI: ") + what + ": " + std::string(text, static_cast<std::size_t>(length)));
}

}  // namespace

struct MpiJob::Pending {
  MPI_Request request;
  std::string bytes;
};

bool launched_by_mpirun() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE", "MPI_LOCALNRANKS"})
    if (std::getenv(name)) return true;
  return false;
}

MpiJob::MpiJob() {
  if (!launched_by_mpirun()) return;
  int provided = 0;
  // Only the main thread of each rank calls MPI; device threads never do.
  check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
  initialized_ = true;
  // A rank that dies must not take the others down through an error handler: errors come back
  // as codes, and silence is noticed by the heartbeat.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  MPI_Comm host;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &host);
  MPI_Comm_rank(host, &local_rank_);
  MPI_Comm_free(&host);
}

MpiJob::~MpiJob() {
  if (!initialized_ || skip_finalize_) return;
  complete_sends();
  // Sends to a dead rank never complete; their buffers are left to the process's end.
  MPI_Finalize();
}

void MpiJob::complete_sends() {
  for (auto it = pending_.begin(); it != pending_.end();) {
    int done = 0;
    if (MPI_Test(&(*it)->request, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS || done) {
      delete *it;
      it = pending_.erase(it);
    } else {
      ++it;
    }
  }
}

void MpiJob::send(int destination, const nlohmann::json& message) {
  complete_sends();
  auto* pending = new Pending{MPI_REQUEST_NULL, message.dump()};
  const int code = MPI_Isend(pending->bytes.data(), static_cast<int>(pending->bytes.size()), MPI_CHAR, destination,
                             kMessageTag, MPI_COMM_WORLD, &pending->request);
  if (code != MPI_SUCCESS) {  // the rank is gone; the heartbeat will say so
    delete pending;
    return;
  }
  pending_.push_back(pending);
}

std::optional<nlohmann::json> MpiJob::try_receive(int source, int* from) {
  int arrived = 0;
  MPI_Status status;
  if (MPI_Iprobe(source < 0 ? MPI_ANY_SOURCE : source, kMessageTag, MPI_COMM_WORLD, &arrived, &status) != MPI_SUCCESS ||
      !arrived)
    return std::nullopt;
  int length = 0;
  MPI_Get_count(&status, MPI_CHAR, &length);
  std::string bytes(static_cast<std::size_t>(length), '\0');
  check(MPI_Recv(bytes.data(), length, MPI_CHAR, status.MPI_SOURCE, kMessageTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
        "MPI_Recv");
  if (from) *from = status.MPI_SOURCE;
  return nlohmann::json::parse(bytes);
}

}  // namespace ktune
