// The CUDA variants compiled into the library ahead of time (library/aot/cuda_aot_main.cpp, at
// build time, with the NVRTC a tune uses, so a call runs the very binary a tune measured): one
// CUBIN per variant and architecture. A variant is named by its key: the family, precision,
// config (less its launch-only parameters, which do not change the binary) and the values of the
// dims its source compiles in (gpu_source.hpp: compile_time_dims): "fam|fp16|<config>|cols=4096;".
//
// Run-time-dims variants (KT_RUNTIME_DIMS=1; the family's descriptor lists them under
// library.runtime_dims) take such a dim from their arguments instead, any value up to a bound
// ("cols<=8192;") or any value at all ("heads=any;"): they serve the shapes no exact variant was
// compiled for.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/family.hpp"
#include "tuner/core/search_space.hpp"

namespace ktune::library {

struct CudaImage {
  std::string_view key;
  std::string_view arch;   // "sm_80", "sm_90a", "compute_80" (PTX)
  std::string_view entry;  // the kernel's name in the module
  std::string_view config;  // the whole config (launch-only parameters too), as JSON
  const unsigned char* data;
  std::size_t size;
};

// The bound of one dim of a run-time-dims variant: a value up to `bound`, or any (no bound).
struct DimBound {
  std::string dim;
  std::optional<std::int64_t> bound;
};

// Every image of this build (generated: cuda_images.cpp).
std::span<const CudaImage> cuda_images();

// `runtime`: the dims the variant takes at run time (then `problem` holds each bound, or any
// value for an unbounded dim).
std::string cuda_variant_key(const KernelFamily& family, const Problem& problem, const Config& config,
                             const SearchSpace& space, const std::vector<DimBound>& runtime = {});

// The key's first fields: "family|precision|" and "family|precision|config|".
std::string cuda_key_prefix(const KernelFamily& family, Precision precision);
std::string cuda_key_prefix(const KernelFamily& family, Precision precision, const Config& config,
                            const SearchSpace& space);

// Whether a variant whose key ends in `dims` ("cols<=8192;rows=any;") runs `problem`. If so,
// `compiled` gets the problem as the variant was compiled (each bounded dim at its bound: what
// its shared memory is sized for) and `slack` how far the bounds lie above the problem's dims
// (0 for an exact variant; a call prefers the smallest).
bool cuda_dims_cover(std::string_view dims, const Problem& problem, Problem& compiled, double& slack);

// The architecture whose images a device of compute capability major.minor loads:
// sm_90a CUBIN for Hopper, sm_80 CUBIN for every 8.x GPU, and compute_80 PTX, which the driver
// compiles for any newer GPU when it loads it.
std::string_view library_cuda_arch(int major, int minor);

}  // namespace ktune::library
