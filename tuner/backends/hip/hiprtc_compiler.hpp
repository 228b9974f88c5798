// Compiles kernel variants with hiprtc to AMD GPU code objects for one target (gfx90a, gfx1030,
// ...), with a disk cache. The sources are the CUDA families' own, made portable by
// kernels/common/gpu_portable.cuh; defines are those of every GPU backend
// (tuner/backends/gpu_source.hpp). Needs no GPU, so every variant can be compile-checked on any
// machine with hiprtc.
//
//   HiprtcCompiler compiler("gfx90a", cache_dir);
//   CompiledHipVariant v = compiler.compile(family, problem, config);   // v.ok, v.code_path, v.log
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "kernels/family.hpp"
#include "tuner/core/config.hpp"

namespace ktune {

struct CompiledHipVariant {
  bool ok = false;
  std::filesystem::path code_path;  // in the cache directory
  std::string entry;                // kernel name to look up in the module
  std::string log;                  // hiprtc's log (the error text when !ok)
  double compile_ms = 0;            // 0 when served from the cache
};

class HiprtcCompiler {
 public:
  // `arch` like "gfx90a" (a device's "gfx90a:sramecc+:xnack-" is cut at the first ':');
  // InputError for a malformed one. BackendUnavailable when hiprtc cannot be loaded.
  // `fast_check`: -O0 instead of -O3 (about 40% faster), for compile checks only (every stage still runs).
  HiprtcCompiler(std::string arch, std::filesystem::path cache_dir, bool fast_check = false);

  // Thread-safe: calls into hiprtc are serialized (hiprtc 5.2 fails spuriously when two compiles
  // run at once); the cache lookup is not.
  CompiledHipVariant compile(const KernelFamily& family, const Problem& problem, const Config& config) const;
  std::vector<std::string> options(const KernelFamily& family, const Problem& problem, const Config& config) const;
  const std::string& arch() const { return arch_; }

  static std::string source_hash(const KernelFamily& family);
  static std::string hiprtc_version();
  // True for names of AMD GPU targets: gfx followed by three or four digits/letters.
  static bool valid_arch(const std::string& arch);

 private:
  std::string arch_;
  std::filesystem::path cache_dir_;
  bool fast_check_ = false;
};

}  // namespace ktune
