// The worker process: opens a backend on one device and evaluates configs sent by the tuner.
// Started by WorkerClient as `ktune worker --backend B --device N` with the request pipe on
// fd 3 and the response pipe on fd 4.
#pragma once

#include <string>

namespace ktune {

inline constexpr int kWorkerRequestFd = 3;
inline constexpr int kWorkerResponseFd = 4;

int run_worker(const std::string& backend, int device_index);

}  // namespace ktune
