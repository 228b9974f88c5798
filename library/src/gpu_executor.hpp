// What the CUDA and HIP executors share: a call prepares the exact binary of a config, or, as
// the last resort, its run-time-dims binary, both found among the backend's compiled-in images
// (gpu_variants.hpp). Each backend says which images are its own and how it loads and launches one.
#pragma once

#include <vector>

#include "library/src/executor.hpp"
#include "library/src/gpu_variants.hpp"

namespace ktune::library {

class GpuExecutor : public Executor {
 public:
  PreparedLaunch prepare(const KernelFamily& family, const Problem& problem, const Config& config,
                         const SearchSpace& space) final {
    return prepare_variant(family, problem, config, space, false);
  }
  PreparedLaunch prepare_run_time_dims(const KernelFamily& family, const Problem& problem, const Config& config,
                                       const SearchSpace& space) final {
    return prepare_variant(family, problem, config, space, true);
  }
  std::vector<Config> run_time_dims_configs(const KernelFamily& family, const Problem& problem) const final {
    return images().run_time_dims_configs(family, problem);
  }

 protected:
  // This backend's images for this device's architecture.
  virtual VariantImages images() const = 0;
  // The exact binary of `config`, or (`run_time_dims_binary`) its run-time-dims binary, loaded
  // and ready to launch; ConfigCannotRun when there is none.
  virtual PreparedLaunch prepare_variant(const KernelFamily& family, const Problem& problem, const Config& config,
                                         const SearchSpace& space, bool run_time_dims_binary) = 0;
};

}  // namespace ktune::library
