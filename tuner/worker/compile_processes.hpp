// GPU variants built in compile processes (ktune workers that open no device) instead of compiler
// threads of the tuner: NVRTC's threads in one process scale about 3x on 16 cores (on an H100
// machine a variant that compiles in 54 ms alone took 304 ms with 16 compiling at once), so a
// tune whose device measures faster than that waited for the compiler. Processes scale with the
// cores. A process that crashes or hangs fails that build with the reason; the next build starts
// a fresh one.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tuner/backends/variant_builder.hpp"

namespace ktune {

// As make_variant_builder, with `processes` compile processes; nullptr for a backend without a
// compile step. InputError up front for a problem the backend's compiler cannot take.
std::unique_ptr<VariantBuilder> make_process_variant_builder(const std::string& backend, const KernelFamily& family,
                                                             const Problem& problem, const std::string& arch,
                                                             int processes, BuildEffort effort,
                                                             const std::vector<std::string>& launch_only);

// The builder of variants that are measured (tune, bench): NVRTC and hiprtc in `parallel` compile
// processes (a stop can kill them, and they scale with the cores), other backends' builds
// (Vulkan's glslang) in `parallel` threads; nullptr for a backend without a compile step.
std::unique_ptr<VariantBuilder> make_measured_variant_builder(const std::string& backend, const KernelFamily& family,
                                                              const Problem& problem, const std::string& arch,
                                                              int parallel, const std::vector<std::string>& launch_only);

}  // namespace ktune
