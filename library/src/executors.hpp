#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "ktune/kernels.hpp"
#include "library/src/executor.hpp"

namespace ktune::library {

// Makes the executor of device `index`; BackendUnavailable when there is none.
struct ExecutorFactory {
  kernels::Backend backend;
  std::function<std::unique_ptr<Executor>(int index)> make;
  // Whether a default Context takes this backend when it has a device (null: always). Vulkan only
  // on a GPU: on lavapipe, a CPU driver, the CPU backend runs the same cores faster.
  std::function<bool()> chosen_by_default;
};

const std::vector<ExecutorFactory>& executor_factories();

std::unique_ptr<Executor> make_cuda_executor(int device);
std::unique_ptr<Executor> make_hip_executor(int device);
std::unique_ptr<Executor> make_vulkan_executor(int device);

}  // namespace ktune::library
