// The GPU variants ktune::kernels compiles while it runs. A call asked to run a config the library
// does not carry (one a tuned database holds, or `use_config` gives, tuned after the library was
// built), or at a shape no carried binary covers, compiles that variant on first use with the
// backend's run-time compiler (NVRTC for CUDA, hiprtc for HIP), with the options a tune compiles
// it with, so it runs the very binary the tune measured. Binaries go to the cache a tune uses
// (tuner/backends/gpu_source.hpp: default_binary_cache_dir), so a later process, or a variant a
// tune on this machine already built, loads in milliseconds. A variant that does not compile is
// remembered and not tried again.
//
// KTUNE_LIBRARY_COMPILE=0 turns this off: a call then runs only the binaries compiled in.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "kernels/family.hpp"
#include "library/src/gpu_variants.hpp"
#include "tuner/backends/runtime_compiler.hpp"
#include "tuner/core/config.hpp"
#include "tuner/core/problem.hpp"

namespace ktune::library {

// False when KTUNE_LIBRARY_COMPILE=0.
bool run_time_compiles_allowed();

class RunTimeImages {
 public:
  // `make_compiler`: the backend's compiler for this device, made on first need; it may throw
  // (BackendUnavailable without NVRTC or hiprtc, InputError for an architecture the compiler
  // cannot target), which every later compile then reports.
  using MakeCompiler = std::function<std::unique_ptr<const RuntimeCompiler>()>;
  explicit RunTimeImages(MakeCompiler make_compiler) : make_compiler_(std::move(make_compiler)) {}

  // The variant `key` (gpu_variant_key of the call's family, problem and config), compiled or
  // read from the cache on first use. ConfigCannotRun, saying why, when compiles are off, there
  // is no compiler, or the variant does not compile. Thread-safe; the image lives as long as this.
  const GpuImage& image(const KernelFamily& family, const Problem& problem, const Config& config,
                        const std::string& key);

 private:
  struct Owned {
    std::string key, arch, entry, config, bytes;
    GpuImage image;
  };

  const RuntimeCompiler& compiler();  // ConfigCannotRun when there is none

  MakeCompiler make_compiler_;
  std::mutex mutex_;
  std::unique_ptr<const RuntimeCompiler> compiler_;
  std::optional<std::string> no_compiler_;  // why there is none, once asked
  std::map<std::string, std::unique_ptr<Owned>> compiled_;
  std::map<std::string, std::string> failed_;  // key -> why it does not compile
};

}  // namespace ktune::library
