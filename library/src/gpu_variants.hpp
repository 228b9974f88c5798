// The GPU variants compiled into the library ahead of time (library/aot/gpu_aot_main.cpp, at
// build time, with the NVRTC or hiprtc a tune uses, so a call runs the very binary a tune
// measured): one CUBIN or PTX (CUDA) or code object (HIP) per variant and architecture. A variant
// is named by its key: the family, precision, config (less its launch-only parameters, which do
// not change the binary) and the values of the dims its source compiles in (gpu_source.hpp:
// compile_time_dims): "fam|fp16|<config>|cols=4096;".
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

struct GpuImage {
  std::string_view key;
  std::string_view arch;    // "sm_80", "sm_90a", "compute_80" (PTX); "gfx90a", "gfx1030"
  std::string_view entry;   // the kernel's name in the module
  std::string_view config;  // the whole config (launch-only parameters too), as JSON
  const unsigned char* data;
  std::size_t size;
};

// Every image of this build, per backend (generated: cuda_images.cpp, hip_images.cpp).
std::span<const GpuImage> cuda_images();
std::span<const GpuImage> hip_images();

// The bound of one dim of a run-time-dims variant: a value up to `bound`, or any (no bound).
struct DimBound {
  std::string dim;
  std::optional<std::int64_t> bound;
};

// `runtime`: the dims the variant takes at run time (then `problem` holds each bound, or any
// value for an unbounded dim).
std::string gpu_variant_key(const KernelFamily& family, const Problem& problem, const Config& config,
                            const SearchSpace& space, const std::vector<DimBound>& runtime = {});

// The key's first fields: "family|precision|" and "family|precision|config|".
std::string gpu_key_prefix(const KernelFamily& family, Precision precision);
std::string gpu_key_prefix(const KernelFamily& family, Precision precision, const Config& config,
                           const SearchSpace& space);

// Whether a variant whose key ends in `dims` ("cols<=8192;rows=any;") runs `problem`. If so,
// `compiled` gets the problem as the variant was compiled (each bounded dim at its bound: what
// its shared memory is sized for) and `slack` how far the bounds lie above the problem's dims
// (0 for an exact variant; a call prefers the smallest).
bool gpu_dims_cover(std::string_view dims, const Problem& problem, Problem& compiled, double& slack);

// Finding the image a call runs, among `images` of architecture `arch`; the CUDA and HIP
// executors share these.
struct VariantImages {
  std::span<const GpuImage> images;
  std::string_view arch;
  std::string_view backend;  // "CUDA", "HIP": for messages

  // The exact variant of `key`; null when there is none.
  const GpuImage* exact(const std::string& key) const;
  // The run-time-dims variant of the config whose key starts with `prefix` (gpu_key_prefix) that
  // takes `problem` with the tightest bounds; null when none does. `compiled` as gpu_dims_cover.
  const GpuImage* run_time_dims(const std::string& prefix, const Problem& problem, Problem& compiled) const;
  // The configs of every run-time-dims variant that takes `problem`, tightest bounds first.
  std::vector<Config> run_time_dims_configs(const KernelFamily& family, const Problem& problem) const;
  // Why no variant runs `key`: which compile-time dims the library has variants for.
  std::string missing(const KernelFamily& family, const Problem& problem, const std::string& key) const;

  // The image a prepared call of `config` runs: its exact variant, or (`run_time_dims_binary`)
  // its run-time-dims variant with the tightest bounds. ConfigCannotRun, saying why, when there
  // is none. `compiled` gets the problem as the binary was compiled (shared memory is sized by it).
  const GpuImage& choose(const KernelFamily& family, const Problem& problem, const Config& config,
                         const SearchSpace& space, bool run_time_dims_binary, Problem& compiled) const;
};

// The CUDA architecture whose images a device of compute capability major.minor loads:
// sm_90a CUBIN for Hopper, sm_80 CUBIN for every 8.x GPU, and compute_80 PTX, which the driver
// compiles for any newer GPU when it loads it.
std::string_view library_cuda_arch(int major, int minor);

}  // namespace ktune::library
