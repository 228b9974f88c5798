// What the library asks of a backend: memory, copies, and a launch of one config of a family on
// the caller's tensors. One implementation per backend (cpu_executor.cpp, ...); context.cpp
// picks one at run time.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "kernels/family.hpp"
#include "tuner/core/config.hpp"
#include "tuner/core/device.hpp"
#include "tuner/core/problem.hpp"
#include "tuner/core/search_space.hpp"

namespace ktune::library {

// One config of one family made ready for one problem (code loaded, launch geometry known).
// launch() takes the tensors in KernelFamily::tensors() order.
using PreparedLaunch = std::function<void(std::span<void* const> tensors, void* stream)>;

// Thrown by Executor::prepare when a config cannot run this problem on this device (a value the
// implementation lacks, a launch the device refuses): the caller tries the next config.
class ConfigCannotRun : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Executor {
 public:
  virtual ~Executor() = default;
  virtual const DeviceInfo& device() const = 0;
  // The name of the backend's search spaces ("cpu", "cuda", "hip", "vulkan").
  virtual std::string backend() const { return device().backend; }
  // True when this backend runs `family` in this build.
  virtual bool runs(const KernelFamily& family) const = 0;
  // Whether launches on `stream` are being captured into a graph now (CUDA or HIP graphs): they
  // may then allocate nothing. An error asking counts as capturing.
  virtual bool capturing(void* stream) const {
    (void)stream;
    return false;
  }

  virtual void* allocate(std::size_t bytes) = 0;
  virtual void release(void* memory) = 0;
  virtual void copy_to_device(void* device, const void* host, std::size_t bytes) = 0;
  virtual void copy_to_host(void* host, const void* device, std::size_t bytes) = 0;
  virtual void synchronize() = 0;

  // ConfigCannotRun when `config` cannot run `problem` here.
  virtual PreparedLaunch prepare(const KernelFamily& family, const Problem& problem, const Config& config,
                                 const SearchSpace& space) = 0;

  // As prepare, but a GPU backend compiles the config's binary now (run_time_images.hpp) when
  // the library carries none for these dims: for a config the caller asked for, and for a shape
  // nothing carried covers. Backends that compile nothing ahead of time (CPU) prepare as usual.
  virtual PreparedLaunch prepare_or_compile(const KernelFamily& family, const Problem& problem,
                                            const Config& config, const SearchSpace& space) {
    return prepare(family, problem, config, space);
  }

  // The configs of the binaries this backend carries that take `problem`'s dims at run time
  // (gpu_variants.hpp), best fitting first: the last resort of a call whose shape no binary
  // was compiled for. Backends that compile nothing in (CPU) or take every dim at run time have none.
  virtual std::vector<Config> run_time_dims_configs(const KernelFamily& family, const Problem& problem) const {
    (void)family;
    (void)problem;
    return {};
  }
  // As prepare, with the run-time-dims binary of `config` (one of run_time_dims_configs). prepare
  // itself takes only binaries compiled for the call's exact dims: a tuned config at a nearby
  // shape is no better than the default through a binary made for another width.
  virtual PreparedLaunch prepare_run_time_dims(const KernelFamily& family, const Problem& problem,
                                               const Config& config, const SearchSpace& space) {
    (void)space;
    (void)config;
    throw ConfigCannotRun("this backend carries no run-time-dims binaries of " + family.name() + " for " +
                          problem.describe());
  }
};

std::unique_ptr<Executor> make_cpu_executor();

}  // namespace ktune::library
