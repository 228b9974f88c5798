// The backends ktune knows and which of them this binary was built with.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernels/family.hpp"
#include "tuner/backends/backend.hpp"

namespace ktune {

// Every backend name ktune knows, built or not: cpu, cuda, hip, vulkan.
std::vector<std::string> known_backend_names();
bool backend_built(const std::string& name);
// InputError for an unknown name (listing the known ones); BackendUnavailable, saying what is
// missing, for a backend this binary was built without.
void require_backend_built(const std::string& name);
// InputError when the backend's kernels cannot store `precision` (Vulkan shaders: fp32, fp16,
// bf16), said before any device is opened or space enumerated. The run-time compilers of the
// other backends say it themselves when their first variant is built.
void require_backend_precision(const std::string& backend, Precision precision);
// The backend `ktune tune` uses when none is given: the first GPU backend with a device,
// else the CPU.
std::string best_available_backend();
// How many devices the backend finds on this host, asked in-process (no kernel runs, no context
// is created): 1 for the CPU, the driver's count for CUDA, 0 when the driver is absent.
int device_count(const std::string& backend);
// Whether the family has an implementation for `backend` in this build.
bool has_implementation(const KernelFamily& family, const std::string& backend);
// Hash of the family's source for `backend`; InputError when the family has no implementation
// for that backend.
std::string kernel_source_hash(const KernelFamily& family, const std::string& backend);
// The backend's run-time compiler as BackendProvider::compiler() describes it; null for a
// backend that compiles nothing at run time or is not built.
nlohmann::json backend_compiler(const std::string& backend);
// A stand-in device of `arch` for building spaces without hardware (--compile-only).
DeviceInfo nominal_device(const std::string& backend, const std::string& arch);
// Opens the backend on a device (worker side). BackendUnavailable when no device is present.
std::unique_ptr<Backend> open_backend(const std::string& name, int device_index);

}  // namespace ktune
