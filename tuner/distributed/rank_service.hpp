// What every rank but 0 does in an MPI tune: opens the devices of its host, says which, and
// measures the configs rank 0 sends until told to quit. It keeps no database and prints no
// results; rank 0 records everything.
#pragma once

#include <string>
#include <vector>

#include "tuner/distributed/mpi_job.hpp"

namespace ktune {

// Returns the rank's exit code: 0 after rank 0's quit, 1 when rank 0 falls silent.
int serve_rank(MpiJob& mpi, const std::string& backend, const std::vector<int>& device_indices);

}  // namespace ktune
