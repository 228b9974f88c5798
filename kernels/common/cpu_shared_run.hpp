// A CPU kernel's prepared run when its state is a class template over the storage type: the
// state made once for the problem's precision, kept alive by the function that runs it.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "kernels/common/cpu_numeric.hpp"
#include "kernels/cpu_kernel.hpp"

namespace ktune::cpu {

// Run<T>(args...) for T the storage type of `precision` (fp32, fp16 or bf16), called by the
// returned function; UnsupportedConfig saying what `kernel` takes for any other precision.
template <template <typename> class Run, typename... Args>
std::function<void()> shared_run(Precision precision, const std::string& kernel, const Args&... args) {
  std::function<void()> run;
  const bool typed = with_storage_type(precision, [&]<typename T>() {
    run = [state = std::make_shared<Run<T>>(args...)] { (*state)(); };
  });
  if (!typed) throw UnsupportedConfig(kernel + " takes fp32, fp16 or bf16");
  return run;
}

}  // namespace ktune::cpu
