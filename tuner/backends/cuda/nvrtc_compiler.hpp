// NVRTC behind RuntimeCompiler (tuner/backends/runtime_compiler.hpp): CUDA variants to CUBIN for
// one architecture, or to PTX for a virtual one (compute_80), which the driver compiles for the
// GPU it loads on.
//
//   NvrtcCompiler compiler("sm_90a", default_binary_cache_dir());
//   CompiledVariant v = compiler.compile(family, problem, config);   // v.ok, v.binary_path, v.log
#pragma once

#include <filesystem>
#include <string>

#include "tuner/backends/runtime_compiler.hpp"

namespace ktune {

class NvrtcCompiler final : public RuntimeCompiler {
 public:
  // `arch` like "sm_90a"; InputError for a malformed one or one this NVRTC cannot target. The
  // cache directory is created.
  // `fast_check`: NVRTC's --Ofast-compile=mid, about 2x (memory-bound kernels) to 3-4x (GEMM)
  // faster; front end, optimizer and ptxas all still run, so a variant that does not build
  // still fails, but its code is not the code a tune measures. For compile checks only.
  NvrtcCompiler(std::string arch, std::filesystem::path cache_dir, bool fast_check = false);

  static std::string nvrtc_version();

 private:
  ProgramOutput translate(const RuntimeProgram& program) const override;
  bool ptx_ = false;
};

}  // namespace ktune
