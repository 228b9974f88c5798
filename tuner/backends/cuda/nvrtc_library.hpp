// NVRTC, CUDA's run-time compiler, loaded at run time (libnvrtc.so.<major>): ktune links no CUDA
// library, so its binaries and ktune::kernels load on machines without the toolkit, and say
// plainly what is missing when a compile needs NVRTC. ktune::kernels compiles, with the NVRTC it
// finds, a config it was asked to run but does not carry (library/src/run_time_images.hpp).
//
//   const NvrtcLibrary& rtc = NvrtcLibrary::get();   // BackendUnavailable without NVRTC
//   rtc.nvrtcCreateProgram(&program, ...);
//
// Where it looks: $KTUNE_NVRTC_LIBRARY (a path or a file name) alone when it is set; else
// libnvrtc.so.<the toolkit's major version> through the loader's paths (or the copy the process
// already loaded, as PyTorch's wheels load theirs), then in the toolkit ktune was built with,
// then in /usr/local/cuda's lib64 and targets/x86_64-linux/lib.
#pragma once

#include <nvrtc.h>

#include <string>

namespace ktune {

struct NvrtcLibrary {
#define KT_NVRTC_FUNCTION(name) decltype(&::name) name = nullptr;
#include "tuner/backends/cuda/nvrtc_functions.inc"
#undef KT_NVRTC_FUNCTION
  std::string path;  // the file it was loaded from, as dlopen was given it

  // Loaded once per process; BackendUnavailable, saying what was tried, when it cannot be.
  static const NvrtcLibrary& get();
};

}  // namespace ktune
