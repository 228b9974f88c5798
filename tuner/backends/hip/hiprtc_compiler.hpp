// hiprtc behind RuntimeCompiler (tuner/backends/runtime_compiler.hpp): kernel variants to AMD GPU
// code objects for one target (gfx90a, gfx1030, ...). The sources are the CUDA families' own, made
// portable by kernels/common/gpu_portable.cuh. Needs no GPU, so every variant can be
// compile-checked on any machine with hiprtc.
//
//   HiprtcCompiler compiler("gfx90a", default_binary_cache_dir());
//   CompiledVariant v = compiler.compile(family, problem, config);   // v.ok, v.binary_path, v.log
#pragma once

#include <filesystem>
#include <string>

#include "tuner/backends/runtime_compiler.hpp"

namespace ktune {

class HiprtcCompiler final : public RuntimeCompiler {
 public:
  // `arch` like "gfx90a" (a device's "gfx90a:sramecc+:xnack-" is cut at the first ':');
  // InputError for a malformed one. BackendUnavailable when hiprtc cannot be loaded.
  // `fast_check`: -O0 instead of -O3 (about 40% faster), for compile checks only (every stage
  // still runs). Compiles are serialized (hiprtc 5.2 fails spuriously when two run at once); the
  // cache lookup is not.
  HiprtcCompiler(std::string arch, std::filesystem::path cache_dir, bool fast_check = false);

  static std::string hiprtc_version();

 private:
  ProgramOutput translate(const RuntimeProgram& program) const override;
};

}  // namespace ktune
