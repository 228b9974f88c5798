// The CUDA variants compiled into the library ahead of time (library/aot/cuda_aot_main.cpp, at
// build time, with the NVRTC a tune uses, so a call runs the very binary a tune measured): one
// CUBIN per variant and architecture. A variant is named by its key: the family, precision,
// config (less its launch-only parameters, which do not change the binary) and the values of the
// dims its source compiles in (gpu_source.hpp: compile_time_dims).
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

#include "kernels/family.hpp"
#include "tuner/core/search_space.hpp"

namespace ktune::library {

struct CudaImage {
  std::string_view key;
  std::string_view arch;   // "sm_80", "sm_90a", "compute_80" (PTX)
  std::string_view entry;  // the kernel's name in the module
  const unsigned char* data;
  std::size_t size;
};

// Every image of this build (generated: cuda_images.cpp).
std::span<const CudaImage> cuda_images();

std::string cuda_variant_key(const KernelFamily& family, const Problem& problem, const Config& config,
                             const SearchSpace& space);

// The architecture whose images a device of compute capability major.minor loads:
// sm_90a CUBIN for Hopper, sm_80 CUBIN for every 8.x GPU, and compute_80 PTX, which the driver
// compiles for any newer GPU when it loads it.
std::string_view library_cuda_arch(int major, int minor);

}  // namespace ktune::library
