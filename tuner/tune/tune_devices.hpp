// The devices a `ktune tune` command measures on, opened on first use (so a tune refused for bad
// input never starts a worker) and kept for every kernel of the command.
//
//   TuneDevices devices("cuda", {0, 1, 2, 3});       // --devices all on a 4-GPU host
//   run_tune(request, devices, observer);
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tuner/tune/evaluation_pool.hpp"
#include "tuner/tune/local_devices.hpp"
#include "tuner/tune/remote_ranks.hpp"

namespace ktune {

class TuneDevices {
 public:
  // `remote`: the other ranks of an MPI job, or nullptr.
  TuneDevices(std::string backend, std::vector<int> device_indices, RemoteRanks* remote = nullptr)
      : backend_(std::move(backend)), device_indices_(std::move(device_indices)), remote_(remote) {}

  const std::string& backend() const { return backend_; }
  // Opens this host's devices on the first call (BackendUnavailable, exit 3, when one is absent).
  EvaluationPool& open(double timeout_s);

 private:
  std::string backend_;
  std::vector<int> device_indices_;
  RemoteRanks* remote_;
  // The pool first, so it outlives the devices: their threads report to it until joined.
  std::unique_ptr<EvaluationPool> pool_;
  std::unique_ptr<LocalDevices> local_;
};

// Parses --devices: "all" (every device the backend finds here), or indices such as "0,2".
// InputError naming the value for anything else, a repeated index, or an index the host lacks.
std::vector<int> parse_device_list(const std::string& text, const std::string& backend, int available);

}  // namespace ktune
