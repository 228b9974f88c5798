// Compiles CUDA kernel variants with NVRTC to CUBIN for one architecture, with a disk cache.
// Parameters become -DKT_<NAME>=<value>, problem dims -DKT_DIM_<NAME>=<value> and the element
// type -DKT_T=<type>. Needs no GPU, so every variant can be compile-checked on any machine.
//
//   NvrtcCompiler compiler("sm_90a", cache_dir);
//   CompiledVariant v = compiler.compile(family, problem, config);   // v.ok, v.cubin_path, v.log
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "kernels/family.hpp"
#include "tuner/core/config.hpp"

namespace ktune {

struct CompiledVariant {
  bool ok = false;
  std::filesystem::path cubin_path;  // in the cache directory
  std::string entry;                 // kernel name to look up in the module
  std::string log;                   // NVRTC's log (the error text when !ok)
  double compile_ms = 0;             // 0 when served from the cache
  bool cached = false;
};

class NvrtcCompiler {
 public:
  // `arch` like "sm_90a"; InputError for a malformed one. The cache directory is created.
  // `fast_check`: NVRTC's --Ofast-compile=mid, about 2x (memory-bound kernels) to 3-4x (GEMM)
  // faster; front end, optimizer and ptxas all still run, so a variant that does not build
  // still fails, but its code is not the code a tune measures. For compile checks only.
  NvrtcCompiler(std::string arch, std::filesystem::path cache_dir, bool fast_check = false);

  // Thread-safe: a pool of threads may compile different variants at once.
  CompiledVariant compile(const KernelFamily& family, const Problem& problem, const Config& config) const;
  // The options a variant is compiled with (also the cache key, with the source).
  std::vector<std::string> options(const KernelFamily& family, const Problem& problem, const Config& config) const;
  const std::string& arch() const { return arch_; }

  // Hash of the family's CUDA source and the shared headers it can include: the kernel source
  // hash stored with measurements.
  static std::string source_hash(const KernelFamily& family);
  // $KTUNE_CACHE_DIR, else $XDG_CACHE_HOME/ktune, else ~/.cache/ktune, else a private
// ktune-cache-<uid> folder in the temporary directory (InputError when that is not private).
  static std::filesystem::path default_cache_dir();
  static std::string nvrtc_version();

 private:
  std::string arch_;
  std::filesystem::path cache_dir_;
  bool fast_check_ = false;
};

}  // namespace ktune
