#include "tuner/backends/cuda/nvrtc_library.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <vector>

#include "tuner/core/errors.hpp"

#ifndef KTUNE_NVRTC_SONAME
#error "KTUNE_NVRTC_SONAME must name the toolkit's NVRTC library (libnvrtc.so.13)"
#endif
#ifndef KTUNE_CUDA_LIBRARY_DIR
#error "KTUNE_CUDA_LIBRARY_DIR must name the toolkit's library directory"
#endif

namespace ktune {
namespace {

struct Loaded {
  NvrtcLibrary library;
  std::string failure;
};

Loaded load() {
  Loaded loaded;
  std::vector<std::string> names;
  if (const char* given = std::getenv("KTUNE_NVRTC_LIBRARY"); given && *given) {
    names.push_back(given);  // as asked, and nothing else: a wrong path must not find another NVRTC
  } else {
    // The loader's paths (and a copy the process already loaded), the toolkit ktune was built
    // with, then the toolkit's usual places (its lib64 link and its target folder, which the
    // loader's cache often lacks).
    names = {KTUNE_NVRTC_SONAME, std::string(KTUNE_CUDA_LIBRARY_DIR) + "/" + KTUNE_NVRTC_SONAME,
             std::string("/usr/local/cuda/lib64/") + KTUNE_NVRTC_SONAME,
             std::string("/usr/local/cuda/targets/x86_64-linux/lib/") + KTUNE_NVRTC_SONAME};
  }
  void* handle = nullptr;
  std::string errors;
  for (const std::string& name : names) {
    handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle) {
      loaded.library.path = name;
      break;
    }
    errors += std::string(errors.empty() ? "" : "; ") + dlerror();
  }
  if (!handle) {
    loaded.failure = "NVRTC, CUDA's run-time compiler, cannot be loaded (" + errors +
                     "). Install the CUDA toolkit's NVRTC (" KTUNE_NVRTC_SONAME
                     ", e.g. the cuda-nvrtc package, or the nvidia-cuda-nvrtc wheel) or name the file in "
                     "KTUNE_NVRTC_LIBRARY.";
    return loaded;
  }
#define KT_NVRTC_FUNCTION(name)                                                                          \
  loaded.library.name = reinterpret_cast<decltype(loaded.library.name)>(dlsym(handle, #name));         \
  if (!loaded.library.name && loaded.failure.empty())                                                  \
    loaded.failure = "the NVRTC library " + loaded.library.path + " lacks " #name                      \
                     "; ktune needs NVRTC 12 or newer";
#include "tuner/backends/cuda/nvrtc_functions.inc"
#undef KT_NVRTC_FUNCTION
  return loaded;
}

}  // namespace

const NvrtcLibrary& NvrtcLibrary::get() {
  static const Loaded loaded = load();
  if (!loaded.failure.empty()) throw BackendUnavailable(loaded.failure);
  return loaded.library;
}

}  // namespace ktune
