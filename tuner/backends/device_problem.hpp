// A problem on a GPU and what loading a variant against it needs, for any runtime API that a
// `Memory` struct describes (CudaMemory in tuner/backends/cuda/cuda_buffer.hpp, HipMemory in the
// HIP backend):
//
//   struct Memory {
//     using Pointer = CUdeviceptr;                                   // a device address
//     static Pointer allocate(std::size_t bytes);                    // the API's error on failure
//     static std::optional<Pointer> allocate_unless_full(std::size_t bytes);  // nullopt: out of memory
//     static void release(Pointer pointer) noexcept;
//     static void upload(Pointer to, const void* from, std::size_t bytes);
//     static void copy(Pointer to, Pointer from, std::size_t bytes);
//     static void zero(Pointer pointer, std::size_t bytes);
//     static void poison(Pointer pointer, std::size_t bytes);               // 0xFF bytes
//     static void copy_queued(Pointer to, Pointer from, std::size_t bytes);  // on the default stream
//   };
//
// DeviceBuffer<Memory> owns one allocation; DeviceProblem<Memory> is a problem's tensors on the
// device. Loading a variant against them, besides loading its module: copy_constant_tensors
// fills the module's __constant__ symbols, allocate_workspace gives the variant its workspace and
// kernel_parameters lists what its launches pass.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kernels/family.hpp"
#include "tuner/backends/host_problem.hpp"
#include "tuner/measure/evaluation.hpp"

namespace ktune {

// Device memory owned by one object and freed when it goes (the no-throw release suits
// destructors). A buffer of 0 bytes still allocates one, so that its pointer is a valid address.
template <class Memory>
struct DeviceBuffer {
  using Pointer = typename Memory::Pointer;
  Pointer pointer{};
  std::size_t bytes = 0;

  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t size) : pointer(Memory::allocate(size == 0 ? 1 : size)), bytes(size) {}
  DeviceBuffer(DeviceBuffer&& other) noexcept : pointer(other.pointer), bytes(other.bytes) { other.pointer = Pointer{}; }
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    std::swap(pointer, other.pointer);
    std::swap(bytes, other.bytes);
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() {
    if (pointer) Memory::release(pointer);
  }

  // nullopt when the device is out of memory (not sticky: the device stays usable); the API's
  // error for any other failure.
  static std::optional<DeviceBuffer> try_allocate(std::size_t size) {
    const std::optional<Pointer> allocated = Memory::allocate_unless_full(size == 0 ? 1 : size);
    if (!allocated) return std::nullopt;
    DeviceBuffer buffer;
    buffer.pointer = *allocated;
    buffer.bytes = size;
    return buffer;
  }
};

// A problem's tensors on the device, uploaded from the host (make_host_problem).
template <class Memory>
struct DeviceProblem {
  std::string key;  // host_problem_key: a backend keeps one problem loaded
  std::vector<TensorSpec> specs;
  std::vector<DeviceBuffer<Memory>> buffers;
  // The initial contents of each read-write tensor (empty elsewhere), copied back before every
  // launch so that every sample computes the same thing.
  std::vector<DeviceBuffer<Memory>> pristine;
  HostTensors expected;  // the float64 reference of each output

  explicit DeviceProblem(HostProblem&& host) : key(std::move(host.key)), specs(std::move(host.specs)) {
    for (std::size_t t = 0; t < specs.size(); ++t) {
      buffers.emplace_back(host.bytes[t]);
      if (!host.stored[t].empty()) Memory::upload(buffers.back().pointer, host.stored[t].data(), host.stored[t].size());
      pristine.emplace_back();
      if (specs[t].read_write) {
        pristine.back() = DeviceBuffer<Memory>(host.bytes[t]);
        Memory::copy(pristine.back().pointer, buffers.back().pointer, host.bytes[t]);
      }
    }
    expected = std::move(host.expected);
  }

  // Every output that is not read-write filled with 0xFF bytes (NaN in every float format), so
  // that an element the kernel forgets to write fails the check.
  void poison_outputs() {
    for (std::size_t t = 0; t < specs.size(); ++t)
      if (specs[t].is_output && !specs[t].read_write) Memory::poison(buffers[t].pointer, buffers[t].bytes);
  }
  // The read-write tensors' initial contents back, queued on the default stream before a launch.
  void restore() {
    for (std::size_t t = 0; t < specs.size(); ++t)
      if (specs[t].read_write) Memory::copy_queued(buffers[t].pointer, pristine[t].pointer, buffers[t].bytes);
  }
};

// A __constant__ symbol of a loaded module.
template <class Pointer>
struct ConstantSymbol {
  Pointer address;
  std::size_t bytes;
};

// MemType Constant tensors, copied into the module's __constant__ symbol of their name. `find`
// (symbol name -> std::optional<ConstantSymbol>) looks one up, nullopt when the variant does not
// read it (compiled out), which `note` then says. False, with result's outcome unsupported, when
// a symbol is smaller than its tensor.
template <class Memory, class Find>
bool copy_constant_tensors(const DeviceProblem<Memory>& problem, Find find, std::string& note,
                           EvaluationResult& result) {
  for (std::size_t t = 0; t < problem.specs.size(); ++t) {
    const std::string& symbol = problem.specs[t].constant_symbol;
    if (symbol.empty()) continue;
    const std::optional<ConstantSymbol<typename Memory::Pointer>> found = find(symbol);
    if (!found) {
      note += "; no __constant__ " + symbol + " in this variant";
      continue;
    }
    const std::size_t bytes = problem.buffers[t].bytes;
    if (found->bytes < bytes) {
      result.outcome = Outcome::unsupported;
      result.message = "__constant__ " + symbol + " holds " + std::to_string(found->bytes) +
                       " bytes, but the argument has " + std::to_string(bytes) +
                       "; make the symbol at least as large as its Size";
      return false;
    }
    Memory::copy(found->address, problem.buffers[t].pointer, bytes);
  }
  return true;
}

// The variant's device workspace of launch.workspace_bytes (split-K partial sums and the like,
// sized by the config), zeroed once: kernels that accumulate into it leave it zeroed after each
// launch. Left empty for 0 bytes or none. False, with result's outcome out_of_memory, when it
// cannot be allocated: the config's outcome, not a failed tune (the device stays usable).
template <class Memory>
bool allocate_workspace(std::int64_t bytes, DeviceBuffer<Memory>& workspace, EvaluationResult& result) {
  if (bytes <= 0) return true;
  std::optional<DeviceBuffer<Memory>> allocated = DeviceBuffer<Memory>::try_allocate(static_cast<std::size_t>(bytes));
  if (!allocated) {
    result.outcome = Outcome::out_of_memory;
    result.message = "the variant's workspace of " + std::to_string(bytes) +
                     " bytes (launch.workspace_bytes) could not be allocated: out of memory";
    return false;
  }
  workspace = std::move(*allocated);
  Memory::zero(workspace.pointer, workspace.bytes);
  return true;
}

// The addresses cuLaunchKernel and hipModuleLaunchKernel take as a kernel's parameters, under the
// kernel contract (kernels/family.hpp): each tensor's device pointer (`pointers`), each dim as
// long long, the backend's `extra` values (CUDA's TMA descriptors), then the workspace's pointer
// when the space declares one (`workspace` not null); or, for a family that orders its arguments
// itself (`listed`, from kernel_arguments: a T1 spec's kernel), those. They point into the
// vectors given, which must stay where they are while the variant runs.
template <class Pointer>
std::vector<void*> kernel_parameters(std::vector<Pointer>& pointers, std::vector<long long>& dims,
                                     const std::vector<void*>& extra, Pointer* workspace,
                                     std::vector<KernelArgument>& listed) {
  std::vector<void*> addresses;
  if (!listed.empty()) {
    for (KernelArgument& argument : listed)
      addresses.push_back(argument.tensor >= 0 ? static_cast<void*>(&pointers.at(static_cast<std::size_t>(argument.tensor)))
                                               : static_cast<void*>(argument.bytes.data()));
    return addresses;
  }
  for (Pointer& pointer : pointers) addresses.push_back(&pointer);
  for (long long& dim : dims) addresses.push_back(&dim);
  addresses.insert(addresses.end(), extra.begin(), extra.end());
  if (workspace) addresses.push_back(workspace);
  return addresses;
}

}  // namespace ktune
