// AMD GPUs as the HIP runtime describes them: what the tuner's HIP backend and ktune::kernels'
// HIP executor both need, with the runtime alone (no hiprtc).
#pragma once

#include <string>

#include "tuner/core/device.hpp"

namespace ktune {

// How many AMD GPUs the HIP runtime sees; 0 without the runtime or a device.
int hip_device_count();
// Device `index` (hipSetDevice'd): its name, limits and properties. BackendUnavailable when
// there is no such device, saying what is missing.
DeviceInfo describe_hip_device(int index);
// Limits of a typical GPU of `arch` (gfx90a: an MI210/MI250X; gfx94x: an MI300; gfx10xx/11xx:
// a Radeon RX 6000/7000), for building constrained spaces when compiling without a GPU.
// InputError for a name that is not an AMD GPU target.
DeviceInfo nominal_hip_device(const std::string& arch);
// "gfx90a" of "gfx90a:sramecc+:xnack-": the target hiprtc compiles for.
std::string hip_target_of(const std::string& gcn_arch_name);
// True for names of AMD GPU targets: gfx followed by three or four digits/letters.
bool valid_hip_arch(const std::string& arch);

}  // namespace ktune
