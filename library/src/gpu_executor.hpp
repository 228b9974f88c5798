// What the CUDA and HIP executors share: a call prepares the exact binary of a config, or, as
// the last resort, its run-time-dims binary, both found among the backend's compiled-in images
// (gpu_variants.hpp); a config the caller asked for, or a shape nothing carried covers, is
// compiled at run time when the library carries no binary of it (run_time_images.hpp). Each
// backend says which images are its own, what compiles for its device, and how it loads and
// launches one.
#pragma once

#include <memory>
#include <vector>

#include "library/src/executor.hpp"
#include "library/src/gpu_variants.hpp"
#include "library/src/run_time_images.hpp"

namespace ktune::library {

class GpuExecutor : public Executor {
 public:
  PreparedLaunch prepare(const KernelFamily& family, const Problem& problem, const Config& config,
                         const SearchSpace& space) final {
    return prepare_variant(family, problem, config, space, Binary::exact);
  }
  PreparedLaunch prepare_or_compile(const KernelFamily& family, const Problem& problem, const Config& config,
                                    const SearchSpace& space) final {
    return prepare_variant(family, problem, config, space, Binary::exact_or_compiled);
  }
  PreparedLaunch prepare_run_time_dims(const KernelFamily& family, const Problem& problem, const Config& config,
                                       const SearchSpace& space) final {
    return prepare_variant(family, problem, config, space, Binary::run_time_dims);
  }
  std::vector<Config> run_time_dims_configs(const KernelFamily& family, const Problem& problem) const final {
    return images().run_time_dims_configs(family, problem);
  }

 protected:
  // Which binary a prepared call runs: the exact one compiled in; that one or, when the library
  // carries none, one compiled now; the run-time-dims one compiled in.
  enum class Binary { exact, exact_or_compiled, run_time_dims };

  // This backend's images for this device's architecture.
  virtual VariantImages images() const = 0;
  // The compiler of this device's binaries (the architecture a tune compiles for on it); may
  // throw BackendUnavailable (no NVRTC or hiprtc) or InputError (one it cannot target).
  virtual std::unique_ptr<const RuntimeCompiler> make_compiler() const = 0;
  // `binary` of `config`, loaded and ready to launch; ConfigCannotRun when there is none.
  virtual PreparedLaunch prepare_variant(const KernelFamily& family, const Problem& problem, const Config& config,
                                         const SearchSpace& space, Binary binary) = 0;

  // The image `binary` names. `compiled` gets the problem as the binary was compiled (a
  // run-time-dims binary's bounds: what its shared memory is sized for). ConfigCannotRun, saying
  // why, when there is none.
  const GpuImage& choose_image(const KernelFamily& family, const Problem& problem, const Config& config,
                               const SearchSpace& space, Binary binary, Problem& compiled);

 private:
  RunTimeImages run_time_{[this] { return make_compiler(); }};
};

}  // namespace ktune::library
