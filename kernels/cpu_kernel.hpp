// The contract between the CPU backend and a family's CPU implementation
// (kernels/<family>/cpu.cpp). A variant is prepared once per config (parameter values resolved,
// template instance chosen) and then launched many times while it is timed.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

#include "kernels/named_tensors.hpp"
#include "tuner/core/config.hpp"
#include "tuner/core/problem.hpp"

namespace ktune {

class ThreadPool;

// One tensor in the problem's precision (float, _Float16 or bf16 storage).
struct CpuTensor {
  void* data;
  std::int64_t elements;
};

struct CpuLaunchContext {
  const Problem& problem;
  const Config& config;
  std::span<const CpuTensor> tensors;  // in KernelFamily::tensors() order
  std::span<const std::string> tensor_names;  // their names, likewise
  ThreadPool& pool;

  // The tensor called `name` in KernelFamily::tensors(); std::logic_error for an unknown name.
  const CpuTensor& tensor(std::string_view name) const {
    return tensor_named(problem.family, tensor_names, tensors, name);
  }
};

// Thrown by prepare() for a value the implementation does not provide; recorded as `unsupported`.
class UnsupportedConfig : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class CpuKernel {
 public:
  virtual ~CpuKernel() = default;
  // Hash of the implementation's source and compile flags: part of every measurement's key, so
  // changing the code invalidates earlier results instead of silently reusing them.
  virtual std::string source_hash() const = 0;
  virtual std::function<void()> prepare(const CpuLaunchContext& context) const = 0;
};

}  // namespace ktune
