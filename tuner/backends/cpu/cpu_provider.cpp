// The CPU backend as the registry sees it: one device, the host, always present.
#include "kernels/cpu_kernel.hpp"
#include "tuner/backends/backend_provider.hpp"
#include "tuner/backends/cpu/cpu_backend.hpp"
#include "tuner/core/errors.hpp"

namespace ktune {
namespace {

class CpuProvider final : public BackendProvider {
 public:
  std::string name() const override { return "cpu"; }
  int device_count() const override { return 1; }
  bool has_implementation(const KernelFamily& family) const override { return family.cpu_kernel() != nullptr; }
  std::string source_hash(const KernelFamily& family) const override { return family.cpu_kernel()->source_hash(); }
  std::unique_ptr<Backend> open(int device_index) const override {
    if (device_index != 0)
      throw BackendUnavailable("the cpu backend has one device (index 0), not " + std::to_string(device_index));
    return std::make_unique<CpuBackend>();
  }
  DeviceInfo nominal_device(const std::string&) const override {
    throw InputError("--arch (a nominal device) applies to GPU backends, not cpu");
  }
};

}  // namespace

const BackendProvider& cpu_backend_provider() {
  static const CpuProvider provider;
  return provider;
}

}  // namespace ktune
