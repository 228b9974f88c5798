// The VariantBuilder of the GPU backends: a pool of compiler threads that builds the configs the
// strategy will propose next while the worker measures the current one. What a build is (NVRTC
// to a CUBIN, hiprtc to an AMD code object) is the backend's compile function.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tuner/backends/variant_builder.hpp"

namespace ktune {

// Builds one config; called from several threads at once, so it must be thread-safe. An
// exception becomes a failed build with its message as the log.
using CompileFunction = std::function<BuiltVariant(const Config& config)>;

// Parameters named in `launch_only` are left out of what is compiled: configs that differ only
// in them are built once and share the binary.
std::unique_ptr<VariantBuilder> make_compile_pool(CompileFunction compile, std::string arch, int threads,
                                                  std::vector<std::string> launch_only = {});

}  // namespace ktune
